import { EventEmitter } from 'eventemitter3';
import { err, ok, type Result } from 'neverthrow';
import type { Agent } from '../kernel/agent.js';
import type { Effect, Observation } from '../kernel/effects.js';
import type { AgentEvent } from '../kernel/events.js';
import type { ImageData, ToolCall } from '../kernel/messages.js';
import { initialState, step } from '../kernel/reducer.js';
import { type AgentState, type FinishReason, isFinal, type RunStatus, type Usage } from '../kernel/state.js';
import { loadTokenizer } from '../kernel/tokens.js';
import type { Tool, ToolContext, ToolOutput, ToolReturn } from '../kernel/tool.js';
import { describeLlmError, type LlmPort } from '../llm/llm.js';
import { linkAbort } from './abort.js';

export type ApprovalDecision = boolean | { readonly approved: boolean; readonly reason?: string };

export interface RunOptions {
  readonly llm: LlmPort;
  readonly signal?: AbortSignal;
  /** Answers ask_human; without it the run pauses as `awaiting_human` and returns its state. */
  readonly onHuman?: (question: string, callId: string) => Promise<string> | string;
  /** Decides calls of tools that need approval; without it the run pauses as `awaiting_approval`. */
  readonly onApproval?: (call: ToolCall, args: unknown) => Promise<ApprovalDecision> | ApprovalDecision;
  /** Gets the state after every transition (persist it to resume after a crash). */
  readonly checkpoint?: (state: AgentState) => Promise<void> | void;
  /** Time limit for a tool call without its own `timeoutMs`. */
  readonly toolTimeoutMs?: number;
  /** Most parallel-safe calls running at once. */
  readonly maxParallelTools?: number;
  readonly workspace?: string;
  /** Receives every item of the run as it happens (the same items `stream` yields). */
  readonly emitter?: RunEmitter;
  /** Keep tool resources (browser, MCP sessions) open after the run, e.g. between flow steps. */
  readonly keepResources?: boolean;
}

/** One thing that happened in a run, in order: an effect starting, an event applied, an observation. */
export type RunItem =
  | {
      readonly type: 'effect';
      readonly effect: Exclude<Effect, { type: 'emit' | 'finish' }>;
    }
  | {
      readonly type: 'event';
      readonly event: AgentEvent;
      readonly state: AgentState;
    }
  | { readonly type: 'observation'; readonly observation: Observation }
  | { readonly type: 'result'; readonly result: RunOutcome };

/**
 * A run item for the wire (JSON lines, server-sent events): events carry the status, step and
 * usage instead of the whole state, model requests their size instead of the history, so what
 * a client receives per step stays small however long the run.
 */
export function compactRunItem(item: RunItem): object {
  switch (item.type) {
    case 'event': {
      const { status, step, usage } = item.state;
      return { type: 'event', event: item.event, status, step, usage };
    }
    case 'effect':
      return item.effect.type === 'callLlm'
        ? {
            type: 'effect',
            effect: { type: 'callLlm', id: item.effect.id, messages: item.effect.request.messages.length },
          }
        : item;
    case 'result': {
      const { state, ...result } = item.result;
      return { type: 'result', result: { ...result, step: state.step } };
    }
    case 'observation':
      return item;
  }
}

export interface RunOutcome {
  /** `finished`/`failed`, or a pause waiting for a person (resume with the state). */
  readonly status: RunStatus;
  readonly finishReason?: FinishReason;
  readonly answer: string;
  readonly error?: string;
  readonly usage: Usage;
  readonly state: AgentState;
}

export type RunEmitter = EventEmitter<{
  [K in RunItem['type']]: (item: Extract<RunItem, { type: K }>) => void;
}>;

export const createRunEmitter = (): RunEmitter => new EventEmitter() as RunEmitter;

export class RunInProgressError extends Error {
  override readonly name = 'RunInProgressError';
}

const activeStates = new WeakSet<AgentState>();

/** Runs a task to its end (or to a pause). `options.state` continues an earlier conversation. */
export async function run(agent: Agent, input: string, options: StartOptions): Promise<RunOutcome> {
  return drive(agent, options.state ?? initialState(), startedEvent(input, options), options, () => {});
}

/** A new task: from scratch, or continuing `state` (multi-turn), optionally with an image. */
export type StartOptions = RunOptions & { readonly state?: AgentState; readonly image?: ImageData };

const startedEvent = (input: string, { image }: StartOptions): AgentEvent =>
  image ? { type: 'started', input, image } : { type: 'started', input };

/** Continues a saved state: redoes what it was waiting for, then runs on. */
export async function resume(agent: Agent, state: AgentState, options: RunOptions): Promise<RunOutcome> {
  return drive(agent, state, { type: 'resumed' }, options, () => {});
}

/** Feeds a host's answer (a person, an approval) into a paused state and runs on. */
export async function resumeWith(
  agent: Agent,
  state: AgentState,
  event: AgentEvent,
  options: RunOptions,
): Promise<RunOutcome> {
  return drive(agent, state, event, options, () => {});
}

/** The same run as `run`, as an async iterator of its items; the last item is the result. */
export function stream(agent: Agent, input: string, options: StartOptions): AsyncIterableIterator<RunItem> {
  const buffered: RunItem[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  let failure: unknown;
  const push = (item: RunItem) => {
    buffered.push(item);
    wake?.();
  };
  drive(agent, options.state ?? initialState(), startedEvent(input, options), options, push)
    .catch((error: unknown) => {
      failure = error;
    })
    .finally(() => {
      done = true;
      wake?.();
    });
  const iterator: AsyncIterableIterator<RunItem> = {
    [Symbol.asyncIterator]: () => iterator,
    async next(): Promise<IteratorResult<RunItem>> {
      while (buffered.length === 0 && !done) await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
      const item = buffered.shift();
      if (item) return { value: item, done: false };
      if (failure) throw failure;
      return { value: undefined, done: true };
    },
  };
  return iterator;
}

/**
 * The only loop that awaits: effects out of the reducer are performed, their outcomes go
 * back in as events, and every transition is checkpointed and announced.
 */
async function drive(
  agent: Agent,
  from: AgentState,
  first: AgentEvent,
  options: RunOptions,
  sink: (item: RunItem) => void,
): Promise<RunOutcome> {
  if (activeStates.has(from)) throw new RunInProgressError('this state is already being run; wait for that run to end');
  activeStates.add(from);
  const { config } = agent;
  const tools = new Map(agent.tools.map((t) => [t.spec.name, t]));
  const announce = (item: RunItem) => {
    sink(item);
    // TypeScript cannot tie `item.type` to `item` across the union; the map type guarantees it.
    options.emitter?.emit(item.type, item as never);
  };
  const signal = options.signal;

  let state = from;
  const queue: Effect[] = [];
  // Transitions are applied one at a time, in arrival order, each followed by its checkpoint.
  let applying: Promise<void> = Promise.resolve();
  const apply = (event: AgentEvent) => {
    applying = applying.then(async () => {
      const [next, effects] = step(config, state, event);
      if (next !== state) {
        activeStates.delete(state);
        activeStates.add(next);
        state = next;
      }
      announce({ type: 'event', event, state });
      queue.push(...effects);
      await options.checkpoint?.(state);
    });
    return applying;
  };

  try {
    if (config.maxInputTokens !== undefined) await loadTokenizer(config.tokenizer);
    await apply(first);
    while (queue.length > 0) {
      if (signal?.aborted) break;
      const batch = queue.splice(0);
      const work: Promise<void>[] = [];
      const toolCalls: Extract<Effect, { type: 'callTool' }>[] = [];
      for (const effect of batch) {
        if (effect.type === 'emit') announce({ type: 'observation', observation: effect.observation });
        else if (effect.type === 'finish') continue;
        else {
          announce({ type: 'effect', effect });
          if (effect.type === 'callTool') toolCalls.push(effect);
          else work.push(perform(effect, agent, options, signal).then((event) => (event ? apply(event) : undefined)));
        }
      }
      if (toolCalls.length > 0) work.push(runTools(toolCalls, tools, options, signal, apply));
      await untilAborted(Promise.all(work), signal);
      await applying;
    }
    if (signal?.aborted && !isFinal(state)) {
      await apply({ type: 'cancelled', reason: abortReason(options.signal) });
    }
  } finally {
    activeStates.delete(state);
    activeStates.delete(from);
    if (!options.keepResources) await cleanup(agent.tools);
  }
  const outcome: RunOutcome = {
    status: state.status,
    answer: state.answer ?? '',
    usage: state.usage,
    state,
    ...(state.finishReason ? { finishReason: state.finishReason } : {}),
    ...(state.error ? { error: state.error } : {}),
  };
  announce({ type: 'result', result: outcome });
  return outcome;
}

/**
 * Performs an LLM call, a context gathering, a human question or an approval; `undefined`
 * means "the host answers later". A port or callback that throws is answered like a failure of that effect, so the
 * run ends (or goes on) with a reason instead of rejecting.
 */
type HostEffect = Extract<Effect, { type: 'callLlm' | 'gatherContext' | 'askHuman' | 'requestApproval' }>;

async function perform(
  effect: HostEffect,
  agent: Agent,
  options: RunOptions,
  signal: AbortSignal | undefined,
): Promise<AgentEvent | undefined> {
  try {
    return await performUnguarded(effect, agent, options, signal);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    switch (effect.type) {
      case 'callLlm':
        return { type: 'llmFailed', error: `the LLM port threw: ${reason}` };
      case 'gatherContext':
        return { type: 'contextGathered', provider: effect.provider, error: reason };
      case 'askHuman':
        return { type: 'humanReplied', callId: effect.callId, answer: `(The question could not be asked: ${reason})` };
      case 'requestApproval':
        return { type: 'approvalDenied', callId: effect.call.id, reason: `the approval check failed: ${reason}` };
    }
  }
}

async function performUnguarded(
  effect: HostEffect,
  agent: Agent,
  options: RunOptions,
  signal: AbortSignal | undefined,
): Promise<AgentEvent | undefined> {
  switch (effect.type) {
    case 'gatherContext': {
      const gather = agent.contextGatherers?.[effect.provider];
      if (!gather) throw new Error(`no gatherer is registered for context provider "${effect.provider}"`);
      const data = await gather(signal ? { signal } : {});
      return { type: 'contextGathered', provider: effect.provider, data };
    }
    case 'callLlm': {
      const result = await options.llm.complete(effect.request, signal ? { signal } : {});
      if (result.isErr()) {
        return signal?.aborted ? undefined : { type: 'llmFailed', error: describeLlmError(result.error) };
      }
      const { content, toolCalls, usage } = result.value;
      return {
        type: 'llmResponded',
        content,
        toolCalls,
        ...(usage ? { usage } : {}),
      };
    }
    case 'askHuman': {
      if (!options.onHuman) return undefined;
      const answer = await options.onHuman(effect.question, effect.callId);
      return { type: 'humanReplied', callId: effect.callId, answer };
    }
    case 'requestApproval': {
      if (!options.onApproval) return undefined;
      const decision = await options.onApproval(effect.call, effect.args);
      const approved = typeof decision === 'boolean' ? decision : decision.approved;
      if (approved) return { type: 'approvalGiven', callId: effect.call.id };
      const reason = typeof decision === 'boolean' ? undefined : decision.reason;
      return {
        type: 'approvalDenied',
        callId: effect.call.id,
        ...(reason ? { reason } : {}),
      };
    }
  }
}

/** Parallel-safe batches run concurrently (capped); any other batch runs in order. */
async function runTools(
  calls: readonly Extract<Effect, { type: 'callTool' }>[],
  tools: ReadonlyMap<string, Tool>,
  options: RunOptions,
  signal: AbortSignal | undefined,
  apply: (event: AgentEvent) => Promise<void>,
): Promise<void> {
  const parallel = calls.every((c) => c.parallelSafe) ? Math.max(1, options.maxParallelTools ?? 8) : 1;
  let next = 0;
  const worker = async () => {
    while (next < calls.length && !signal?.aborted) {
      const effect = calls[next++];
      if (!effect) return;
      const completed = await executeTool(effect, tools.get(effect.call.name), options, signal);
      if (!signal?.aborted) await apply(completed);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, calls.length) }, worker));
}

/** Runs one tool call; whatever goes wrong becomes an observation for the model. */
export async function executeTool(
  effect: Extract<Effect, { type: 'callTool' }>,
  tool: Tool | undefined,
  options: Pick<RunOptions, 'toolTimeoutMs' | 'workspace'> & { readonly llm?: LlmPort },
  runSignal: AbortSignal | undefined,
): Promise<Extract<AgentEvent, { type: 'toolCompleted' }>> {
  const { call } = effect;
  const metered = options.llm ? meteredLlm(options.llm) : undefined;
  const completed = (output: string, isError: boolean, image?: ImageData) =>
    ({
      ...(metered?.usage.llmCalls ? { usage: { ...metered.usage } } : {}),
      type: 'toolCompleted',
      callId: call.id,
      output,
      ...(isError ? { isError } : {}),
      ...(image ? { image } : {}),
    }) as const;
  if (!tool) return completed(`Error: no implementation is registered for tool '${call.name}'.`, true);
  const parsed = tool.parse(effect.args);
  if (!parsed.ok) return completed(`Error: invalid arguments for ${call.name}:\n${parsed.error}`, true);

  const timeoutMs = effect.timeoutMs ?? options.toolTimeoutMs ?? 120_000;
  const link = linkAbort(runSignal, timeoutMs);
  try {
    const context: ToolContext = {
      get signal() {
        return link.signal;
      },
      callId: call.id,
      ...(options.workspace ? { workspace: options.workspace } : {}),
      ...(metered ? { llm: metered.port } : {}),
    };
    const returned = await Promise.race([
      Promise.resolve(tool.execute(parsed.value, context)),
      link.stopped.then((): typeof aborted => aborted),
    ]);
    if (returned === aborted) {
      return link.timedOut()
        ? completed(`Error: ${call.name} timed out after ${timeoutMs} ms and was stopped.`, true)
        : completed(`Error: ${call.name} was cancelled.`, true);
    }
    const result = normalise(returned);
    if (result.isErr()) return completed(`Error: ${result.error}`, true);
    const { output, image } = result.value;
    return completed(output === '' && !image ? `${call.name} completed with no output.` : output, false, image);
  } catch (error) {
    return completed(`Error: ${call.name} failed: ${error instanceof Error ? error.message : String(error)}`, true);
  } finally {
    link.dispose();
  }
}

/** The run's LLM port as a tool sees it: the same model, with the tool's calls counted. */
function meteredLlm(llm: LlmPort): {
  port: LlmPort;
  usage: { inputTokens: number; outputTokens: number; llmCalls: number };
} {
  const usage = { inputTokens: 0, outputTokens: 0, llmCalls: 0 };
  const port: LlmPort = {
    model: llm.model,
    complete: async (request, callOptions) => {
      const result = await llm.complete(request, callOptions);
      usage.llmCalls++;
      if (result.isOk() && result.value.usage) {
        usage.inputTokens += result.value.usage.inputTokens;
        usage.outputTokens += result.value.usage.outputTokens;
      }
      return result;
    },
  };
  return { port, usage };
}

function normalise(returned: ToolReturn): Result<ToolOutput, string> {
  if (typeof returned === 'string') return ok({ output: returned });
  if ('isOk' in returned) {
    return returned.match(
      (value): Result<ToolOutput, string> => ok(typeof value === 'string' ? { output: value } : value),
      (error): Result<ToolOutput, string> => err(error instanceof Error ? error.message : error),
    );
  }
  return ok(returned);
}

const aborted: unique symbol = Symbol('aborted');

/** Resolves with the promise, or with `aborted` as soon as the signal fires (the promise is left behind). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T | typeof aborted> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.resolve(aborted);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(aborted);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function abortReason(signal: AbortSignal | undefined): string {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error && reason.name !== 'AbortError') return reason.message;
  return typeof reason === 'string' ? reason : 'the run was cancelled';
}

async function cleanup(tools: readonly Tool[]): Promise<void> {
  await Promise.allSettled(tools.map(async (tool) => tool.cleanup?.()));
}
