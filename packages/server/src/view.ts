import {
  type Agent,
  type AgentState,
  compactRunItem,
  costOf,
  type ElicitationForm,
  type RunError,
  type RunItem,
  type Usage,
} from '@openmanus/core';
import { pendingInputs } from '@openmanus/core/kernel';
import { PLANNING_TOOL, type Plan, type PlanBook } from '@openmanus/flow';

/** How much of a tool's arguments or output a client is sent: the page shows results short. */
export const SHORT_TEXT = 2000;

export const shorten = (text: string, limit = SHORT_TEXT): string =>
  text.length <= limit ? text : `${text.slice(0, limit)}… (${text.length - limit} more characters)`;

/** One line of a run's story, as the page shows it. */
export type TimelineEntry =
  | { readonly kind: 'user'; readonly text: string }
  | { readonly kind: 'assistant'; readonly text: string }
  | {
      readonly kind: 'call';
      readonly callId: string;
      readonly tool: string;
      readonly args: string;
      readonly result?: string;
      readonly isError?: boolean;
    };

/** What a paused run waits for: an approval of a call, or a person's reply to a question. */
export type PendingView =
  | {
      readonly kind: 'approval';
      readonly effectId: string;
      readonly callId: string;
      readonly tool: string;
      readonly args: string;
    }
  | {
      readonly kind: 'human';
      readonly effectId: string;
      readonly callId: string;
      readonly question: string;
      /** A form (an MCP server's question): its message and fields' JSON Schema; answer with the fields as JSON. */
      readonly form?: ElicitationForm;
    };

/** Usage as clients get it: `costUsd` always there, `null` when unknown (a call made without a price). */
export type UsageView = Omit<Usage, 'costUsd'> & { readonly costUsd: number | null };

export const usageView = (usage: Usage): UsageView => ({ ...usage, costUsd: costOf(usage) });

/** A run as clients see it: `GET /runs/:id`, and the first and last server-sent event of a stream. */
export interface RunView {
  readonly id: string;
  /** The agent running it, by its name in the server's `agents`. */
  readonly agent: string;
  readonly status: AgentState['status'];
  readonly step: number;
  /** What the run's model calls used (every task of its conversation), and what they cost. */
  readonly usage: UsageView;
  readonly finishReason?: AgentState['finishReason'];
  readonly answer?: string;
  /** Why the run failed or stopped early: `code` (`LLM_RATE_LIMIT`, `MAX_STEPS`, …) and `message`. */
  readonly error?: RunError;
  readonly pending: readonly PendingView[];
  /** The plan the agent keeps with the planning tool (its active one), when it made one. */
  readonly plan?: Plan;
  readonly timeline: readonly TimelineEntry[];
}

/**
 * "The plan" of a run: the active plan of the planning tool (`@openmanus/flow`'s
 * `createPlanningTool`), which keeps its plans in the run's state under its name.
 */
export function planOf(state: AgentState): Plan | undefined {
  const book = state.toolData?.[PLANNING_TOOL] as PlanBook | undefined;
  return book?.active ? book.plans[book.active] : undefined;
}

/** The conversation as entries: the tasks, what the model said, each call with its (short) result. */
function timelineOf(state: AgentState): TimelineEntry[] {
  const entries: TimelineEntry[] = [];
  const calls = new Map<string, number>();
  for (const message of state.messages) {
    if (message.role === 'user') entries.push({ kind: 'user', text: shorten(message.content) });
    if (message.role === 'assistant') {
      if (message.content.trim()) entries.push({ kind: 'assistant', text: shorten(message.content) });
      for (const call of message.toolCalls ?? []) {
        calls.set(call.id, entries.length);
        entries.push({ kind: 'call', callId: call.id, tool: call.name, args: shorten(call.arguments) });
      }
    }
    if (message.role === 'tool') {
      const at = calls.get(message.toolCallId);
      const entry = at === undefined ? undefined : entries[at];
      if (entry?.kind === 'call')
        entries[at as number] = {
          ...entry,
          result: shorten(message.content),
          // Core words every failed call's observation so (the state keeps no flag once the turn is over).
          ...(message.content.startsWith('Error:') ? { isError: true } : {}),
        };
    }
  }
  return entries;
}

export function runView(agent: Agent, name: string, id: string, state: AgentState): RunView {
  const plan = planOf(state);
  return {
    id,
    agent: name,
    status: state.status,
    step: state.step,
    usage: usageView(state.usage),
    ...(state.finishReason ? { finishReason: state.finishReason } : {}),
    ...(state.answer !== undefined ? { answer: state.answer } : {}),
    ...(state.error !== undefined ? { error: state.error } : {}),
    pending: pendingInputs(agent.config, state).map(
      (input): PendingView =>
        input.kind === 'approval'
          ? {
              kind: 'approval',
              effectId: input.effectId,
              callId: input.call.id,
              tool: input.call.name,
              args: shorten(input.call.arguments),
            }
          : {
              kind: 'human',
              effectId: input.effectId,
              callId: input.call.id,
              question: input.question,
              ...(input.form ? { form: input.form } : {}),
            },
    ),
    ...(plan ? { plan } : {}),
    timeline: timelineOf(state),
  };
}

/**
 * A run item for the wire: core's compact form (no history, no whole state), with tool outputs
 * cut short and images left out, so that a step costs a client the same however long the run;
 * usage with its cost always given.
 */
export function wireItem(item: RunItem): object {
  if (item.type === 'event') {
    const usage = usageView(item.state.usage);
    if (item.event.type !== 'toolCompleted') return { ...compactRunItem(item), usage };
    const { image, data: _data, ...event } = item.event;
    return {
      ...compactRunItem(item),
      usage,
      event: { ...event, output: shorten(event.output), ...(image ? { image: true } : {}) },
    };
  }
  if (item.type === 'result') {
    const compact = compactRunItem(item) as { result: object };
    return { ...compact, result: { ...compact.result, usage: usageView(item.result.usage) } };
  }
  return compactRunItem(item);
}
