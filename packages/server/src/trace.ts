import type { AgentEvent, RunError, ToolCall } from '@openmanus/core';
import type { LlmUsage } from '@openmanus/core/kernel';
import type { JournalEntry } from './journal.js';

/** One transition of a run, as the studio lists it. */
export interface TransitionView {
  readonly n: number;
  readonly at: string;
  readonly event: string;
  readonly effectId?: string;
  readonly status?: string;
  readonly step?: number;
}

export interface ModelCallView {
  readonly effectId: string;
  readonly transition?: number;
  readonly answeredAt?: number;
  readonly at: string;
  readonly latencyMs: number | null;
  readonly usage?: LlmUsage;
  readonly sent: { readonly messages: number; readonly tools: readonly string[] };
  readonly reply?: { readonly content: string; readonly toolCalls: readonly ToolCall[] };
  readonly error?: RunError;
}

export interface ToolCallView {
  readonly effectId: string;
  readonly callId: string;
  readonly tool: string;
  readonly args: string;
  readonly transition?: number;
  readonly at: string;
  readonly latencyMs: number | null;
  readonly result?: string;
  readonly isError?: boolean;
  /** What the child run this call ran (an agent tool, a flow step) did. */
  readonly children?: ChildTrace;
}

export interface ChildTrace {
  readonly modelCalls: readonly ModelCallView[];
  readonly toolCalls: readonly ToolCallView[];
}

export interface RunTrace extends ChildTrace {
  readonly transitions: readonly TransitionView[];
}

/** The common shape of a run's own entries and its children's: an effect started or an event applied. */
interface Happening {
  readonly at: number;
  readonly n?: number;
  readonly event?: AgentEvent;
  readonly effect?: { readonly type: string; readonly id: string; readonly call?: ToolCall };
  readonly sent?: ModelCallView['sent'];
  readonly children?: Happening[];
}

const iso = (at: number) => new Date(at).toISOString();

function traceOf(happenings: readonly Happening[], childrenOf: (effectId: string) => ChildTrace | undefined) {
  const modelCalls: ModelCallView[] = [];
  const toolCalls: ToolCallView[] = [];
  const models = new Map<string, number>();
  const tools = new Map<string, number>();
  for (const happening of happenings) {
    const { effect, event } = happening;
    if (effect?.type === 'callLlm') {
      models.set(effect.id, modelCalls.length);
      modelCalls.push({
        effectId: effect.id,
        ...(happening.n !== undefined ? { transition: happening.n } : {}),
        at: iso(happening.at),
        latencyMs: null,
        sent: happening.sent ?? { messages: 0, tools: [] },
      });
    }
    if (effect?.type === 'callTool' && effect.call) {
      tools.set(effect.id, toolCalls.length);
      const children = childrenOf(effect.id);
      toolCalls.push({
        effectId: effect.id,
        callId: effect.call.id,
        tool: effect.call.name,
        args: effect.call.arguments,
        ...(happening.n !== undefined ? { transition: happening.n } : {}),
        at: iso(happening.at),
        latencyMs: null,
        ...(children ? { children } : {}),
      });
    }
    if (!event || !('effectId' in event)) continue;
    const model = models.get(event.effectId);
    if (model !== undefined && (event.type === 'llmResponded' || event.type === 'llmFailed')) {
      const call = modelCalls[model] as ModelCallView;
      modelCalls[model] = {
        ...call,
        ...(happening.n !== undefined ? { answeredAt: happening.n } : {}),
        latencyMs: happening.at - Date.parse(call.at),
        ...(event.type === 'llmResponded'
          ? {
              reply: { content: event.content, toolCalls: event.toolCalls },
              ...(event.usage ? { usage: event.usage } : {}),
            }
          : { error: event.error }),
      };
    }
    const tool = tools.get(event.effectId);
    if (tool !== undefined && (event.type === 'toolCompleted' || event.type === 'callRefused')) {
      const call = toolCalls[tool] as ToolCallView;
      toolCalls[tool] = {
        ...call,
        latencyMs: happening.at - Date.parse(call.at),
        ...(event.type === 'toolCompleted'
          ? { result: event.output, ...(event.isError ? { isError: true } : {}) }
          : { result: event.error, isError: true }),
      };
    }
  }
  return { modelCalls, toolCalls };
}

/** A child item as the recorder kept it (`childItem`): an effect, or an event with its status. */
type ChildEntry = Extract<JournalEntry, { kind: 'child' }>;

function childHappening(entry: ChildEntry): Happening {
  const item = entry.item as {
    type: string;
    effect?: Happening['effect'] & { messages?: number };
    event?: AgentEvent;
  };
  if (item.type === 'effect' && item.effect)
    return {
      at: entry.at,
      effect: item.effect,
      ...(item.effect.type === 'callLlm' ? { sent: { messages: item.effect.messages ?? 0, tools: [] } } : {}),
    };
  if (item.type === 'event' && item.event) return { at: entry.at, event: item.event };
  return { at: entry.at };
}

/** The trace of child runs under the tool call `effectId` at `depth` (their origins that deep). */
function childTrace(children: readonly ChildEntry[], effectId: string, depth: number): ChildTrace | undefined {
  const own = children.filter((entry) => entry.origin[depth]?.effectId === effectId);
  if (own.length === 0) return undefined;
  const direct = own.filter((entry) => entry.origin.length === depth + 1).map(childHappening);
  return traceOf(direct, (id) => childTrace(own, id, depth + 1));
}

/** A run's journal as the studio shows it: its transitions, model calls and tool calls, children nested. */
export function runTrace(entries: readonly JournalEntry[]): RunTrace {
  const transitions: TransitionView[] = [];
  const happenings: Happening[] = [];
  const children: ChildEntry[] = [];
  let status: string | undefined;
  let step: number | undefined;
  // A request journals its tools only when they changed.
  let toolNames: string[] = [];
  for (const entry of entries) {
    if (entry.kind === 'child') children.push(entry);
    if (entry.kind === 'event') {
      const set = entry.delta.set as { status?: string; step?: number } | undefined;
      status = set?.status ?? status;
      step = set?.step ?? step;
      transitions.push({
        n: entry.n,
        at: iso(entry.at),
        event: entry.event.type,
        ...('effectId' in entry.event ? { effectId: entry.event.effectId } : {}),
        ...(status !== undefined ? { status } : {}),
        ...(step !== undefined ? { step } : {}),
      });
      happenings.push({ at: entry.at, n: entry.n, event: entry.event });
    }
    if (entry.kind === 'effect') {
      const { request } = entry;
      if (request?.tools) toolNames = request.tools.map((tool) => tool.name);
      const sent = request && {
        messages: request.messages.reduce((sum, m) => sum + ('message' in m ? 1 : m.to - m.from), 0),
        tools: toolNames,
      };
      happenings.push({
        at: entry.at,
        n: entry.n,
        effect: entry.effect as Happening['effect'] & object,
        ...(sent ? { sent } : {}),
      });
    }
  }
  return { transitions, ...traceOf(happenings, (id) => childTrace(children, id, 0)) };
}
