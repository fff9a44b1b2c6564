import { hasErrorCode, OpenManusError } from '../errors.js';
import type { Agent } from '../kernel/agent.js';
import { type ApprovalRule, withApprovals } from '../kernel/approvals.js';
import type { AnyEffect } from '../kernel/effects.js';
import type { AnyEvent, HostAnswer } from '../kernel/events.js';
import type { ImageData } from '../kernel/messages.js';
import { isTokenBudget } from '../kernel/policies.js';
import { initialState, pendingInputs, step } from '../kernel/reducer.js';
import { type AgentState, isFinal } from '../kernel/state.js';
import { loadTokenizer } from '../kernel/tokens.js';
import { sandboxOf } from '../sandbox/runSandbox.js';
import type { Tool } from '../tools/defineTool.js';
import { admitRun } from './admission.js';
import { drive, type Machine } from './driver.js';
import { type ItemSink, itemStream } from './itemStream.js';
import type { SharedRunOptions } from './outcome.js';
import { type AgentPerformers, agentPerformers, askingAfterCheck, type HostPerformers } from './performers.js';
import { InvalidStateError, restore } from './restore.js';
import type { RunEmitter, RunItem, RunOutcome } from './runItems.js';
import type { SandboxProvider } from './sandboxPort.js';
import { createResourcePool, hostCallbacksOf, type RunScope } from './scope.js';

export interface RunOptions extends SharedRunOptions<AgentState> {
  /**
   * Calls that wait for approval in this run, besides those the tools gate: tool names, per tool
   * `true` or a predicate on the arguments, or a function. Give the same rule when resuming.
   */
  readonly approvals?: ApprovalRule;
  /** The run's id (tools key resources and idempotency on it); default: the saved state's, else a new UUID. */
  readonly runId?: string;
  /** Most parallel-safe calls running at once. */
  readonly maxParallelTools?: number;
  /** Receives every item of the run as it happens (the same items `stream` yields). */
  readonly emitter?: RunEmitter;
  /** Where the run's tools execute: one sandbox per run, made on first use (default: the host). */
  readonly sandbox?: SandboxProvider;
  /**
   * Performers replacing the defaults, or for effect types of the host's own; as a function, made
   * from the defaults (to wrap them: a durable run records each as an engine step).
   */
  readonly performers?: HostPerformers | ((defaults: AgentPerformers) => HostPerformers);
}

/** A new task: from scratch, or continuing `state` (multi-turn), optionally with an image. */
export type StartOptions = RunOptions & { readonly state?: AgentState; readonly image?: ImageData };

/** A run of this state is already going on in this process: two runs of one state would overwrite each other. */
export class RunInProgressError extends OpenManusError<'RUN_IN_PROGRESS'> {
  static readonly codes = ['RUN_IN_PROGRESS'] as const;
  override readonly name = 'RunInProgressError';
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super('RUN_IN_PROGRESS', message, options);
  }
  static override isInstance(value: unknown): value is RunInProgressError {
    return hasErrorCode(value, RunInProgressError.codes);
  }
}

// The state each run in this process is at (each run removes its own when it ends): a Set, as
// a WeakSet's entries cost the garbage collector extra work at every step.
const activeStates = new Set<AgentState>();

/** Runs a task to its end (or to a pause). `options.state`, or the store's copy of `runId`, continues a conversation. */
export async function run(agent: Agent, input: string, options: StartOptions): Promise<RunOutcome> {
  return startTask(agent, input, options);
}

/** A new task on the state the options name (or a fresh one), checked to be able to take it. */
async function startTask(
  agent: Agent,
  input: string,
  options: StartOptions,
  sink?: ItemSink<RunItem>,
): Promise<RunOutcome> {
  const started: AnyEvent = { type: 'started', input, ...(options.image ? { image: options.image } : {}) };
  return runFrom(agent, ready(await startingPoint(options), options), started, options, sink);
}

/** A new task goes on a state that is idle or finished; one still running or paused would be lost. */
function ready(start: Start, options: RunOptions): Start {
  const { status } = start.state;
  if (status === 'idle' || isFinal(start.state)) return start;
  const which = options.runId ? `run "${options.runId}"` : 'the state';
  throw new InvalidStateError(
    `cannot start a new task: ${which} is ${status}; continue it with resume() or answer it with resumeWith()`,
    'RUN_UNFINISHED',
  );
}

/** Continues a saved state (or the store's copy of a run id): redoes what it was waiting for, then runs on. */
export async function resume(agent: Agent, saved: unknown, options: RunOptions): Promise<RunOutcome> {
  return resumeFrom(agent, saved, options);
}

async function resumeFrom(agent: Agent, saved: unknown, options: RunOptions, sink?: ItemSink<RunItem>) {
  return runFrom(agent, await restored(saved, options), { type: 'resumed' }, options, sink);
}

/** Feeds a host's answer (a person's reply, an approval) into a paused state and runs on. */
export async function resumeWith(
  agent: Agent,
  saved: unknown,
  event: AnyEvent,
  options: RunOptions,
): Promise<RunOutcome> {
  return answerFrom(agent, saved, event, options);
}

async function answerFrom(
  agent: Agent,
  saved: unknown,
  event: AnyEvent,
  options: RunOptions,
  sink?: ItemSink<RunItem>,
): Promise<RunOutcome> {
  const start = await restored(saved, options);
  waitsFor(agent, start, event, options);
  return runFrom(agent, start, event, options, sink);
}

const ANSWERS: Readonly<Record<HostAnswer['type'], 'human' | 'approval'>> = {
  humanReplied: 'human',
  approvalGiven: 'approval',
  approvalDenied: 'approval',
};
const isAnswer = (event: AnyEvent): event is HostAnswer => Object.hasOwn(ANSWERS, event.type);

/**
 * An event for a run that can take it: a finished run takes none, and an answer must be to an
 * input the run waits for. Else nothing would change but the stored version: the host is told.
 */
function waitsFor(agent: Agent, start: Start, event: AnyEvent, options: RunOptions): void {
  const { state } = start;
  const which = start.read ? `run "${start.read.runId}"` : options.runId ? `run "${options.runId}"` : 'the state';
  if (isFinal(state)) {
    throw new InvalidStateError(
      `${which} has ${state.status === 'failed' ? 'failed' : 'finished'} (${state.finishReason ?? 'no reason'}); ` +
        `it waits for no ${event.type} (start a new task with run())`,
      'RUN_NOT_WAITING',
    );
  }
  if (!isAnswer(event)) return;
  const kind = ANSWERS[event.type];
  const waiting = pendingInputs(agent.config, state);
  if (waiting.some((input) => input.kind === kind && input.effectId === event.effectId)) return;
  const listed = waiting.map((input) => `${input.kind} ${input.effectId}`).join(', ') || 'nothing';
  throw new InvalidStateError(
    `${which} waits for no ${kind} "${event.effectId}" (it waits for: ${listed}); nothing was changed`,
    'RUN_NOT_WAITING',
  );
}

/**
 * The same run as `run`, as an async iterator of its items; the last item is the result.
 * Leaving the loop early cancels the run; a slow consumer slows the run (the buffer is bounded).
 */
export function stream(agent: Agent, input: string, options: StartOptions): AsyncIterableIterator<RunItem> {
  return itemStream<RunItem>((sink, signal) => startTask(agent, input, { ...options, signal }, sink), options.signal);
}

/** `resume` as an async iterator of the run's items, as `stream` is to `run`. */
export function streamResume(agent: Agent, saved: unknown, options: RunOptions): AsyncIterableIterator<RunItem> {
  return itemStream<RunItem>((sink, signal) => resumeFrom(agent, saved, { ...options, signal }, sink), options.signal);
}

/**
 * `resumeWith` as an async iterator of the run's items: the answer is checked first (an answer
 * the run does not wait for is thrown from the first `next()`, nothing changed), then the items.
 */
export function streamResumeWith(
  agent: Agent,
  saved: unknown,
  event: AnyEvent,
  options: RunOptions,
): AsyncIterableIterator<RunItem> {
  return itemStream<RunItem>(
    (sink, signal) => answerFrom(agent, saved, event, { ...options, signal }, sink),
    options.signal,
  );
}

/** Where a run starts, and the store version it was read at under which id (a later save must not be overwritten). */
interface Start {
  readonly state: AgentState;
  readonly read?: { readonly runId: string; readonly version: number };
}

async function startingPoint(options: StartOptions): Promise<Start> {
  if (options.state) return { state: await restore(options.state) };
  if (!options.store || !options.runId) return { state: initialState() };
  const { runId } = options;
  const stored = await options.store.load(runId);
  if (!stored) return { state: initialState(), read: { runId, version: 0 } };
  return { state: await restore(stored.state), read: { runId, version: stored.version } };
}

/** A saved state checked whole (migrated when older), or the store's copy of a run id. */
async function restored(saved: unknown, options: RunOptions): Promise<Start> {
  if (typeof saved === 'string') {
    if (!options.store)
      throw new InvalidStateError(`resuming run "${saved}" needs a store to load it from`, 'RUN_NOT_FOUND');
    const stored = await options.store.load(saved);
    if (!stored) throw new InvalidStateError(`run "${saved}" is not in the store`, 'RUN_NOT_FOUND');
    return { state: await restore(stored.state), read: { runId: saved, version: stored.version } };
  }
  return { state: await restore(saved) };
}

/**
 * The state offering only tools this run can call. A tool that something added mid-run
 * (`scope.changeTools`) is in the state's list, but its implementation lived in that run: a run
 * from the state offers it only when the agent has an implementation of that name, else leaves
 * it out (until what added it adds it again, as an MCP client does at its first step), so the
 * model is never offered, or told of, a tool that cannot run. The agent's own specs always stay.
 */
function callableTools(agent: Agent, state: AgentState): AgentState {
  const listed = state.tools;
  if (!listed) return state;
  const known = new Set([...agent.config.tools.map((spec) => spec.name), ...agent.tools.map((tool) => tool.spec.name)]);
  const callable = listed.filter((spec) => known.has(spec.name));
  return callable.length === listed.length ? state : { ...state, tools: callable };
}

/**
 * One agent run on the driver: the agent's step as the machine, its performers, a scope of
 * its own (id, signal, resources), checkpoints, and run items to the emitter and stream.
 */
async function runFrom(
  given: Agent,
  start: Start,
  first: AnyEvent,
  options: RunOptions,
  sink?: ItemSink<RunItem>,
): Promise<RunOutcome> {
  // Many runs started at once begin in slices, one turn of the event loop each.
  const admission = admitRun();
  if (admission) await admission;
  const agent = options.approvals ? withApprovals(given, options.approvals) : given;
  const saved = start.state;
  if (activeStates.has(saved))
    throw new RunInProgressError('this state is already being run; wait for that run to end');
  const from = callableTools(agent, saved);
  const runId = options.runId ?? start.read?.runId ?? from.runId ?? crypto.randomUUID();
  const opening: AnyEvent = first.type === 'started' || first.type === 'resumed' ? { ...first, runId } : first;
  const store = options.store;
  // A state the host passed in supersedes what the store holds; one read from the store must still be current.
  const read = start.read?.runId === runId ? start.read.version : undefined;
  let version = store ? (read ?? (await store.load(runId))?.version ?? 0) : 0;
  // Counts are exact once the ranks are loaded; budgets and compaction estimate until then.
  const { memory } = agent.config;
  const budgeted = agent.policies?.some((policy) => isTokenBudget(policy) && !policy.count) === true;
  if (budgeted || memory.maxTokens !== undefined || memory.summarize) {
    await loadTokenizer(agent.config.tokenizer).catch(() => undefined);
  }

  let current = from;
  let ended = false;
  activeStates.add(saved);
  activeStates.add(current);
  const deliver = (item: RunItem) => {
    // TypeScript cannot tie `item.type` to `item` across the union; the map type guarantees it.
    options.emitter?.emit(item.type, item as never);
    return sink?.(item);
  };
  const announce = (item: RunItem) => {
    // Nothing this run started (a child agent still stopping, a resource) speaks after it returned.
    if (ended) return undefined;
    if (item.type === 'event' && item.state !== current) {
      activeStates.delete(current);
      current = item.state;
      activeStates.add(current);
    }
    return deliver(item);
  };

  const pool = options.resources ?? createResourcePool();
  const tools = new Map<string, Tool>(agent.tools.map((t) => [t.spec.name, t]));
  let control: { signal: AbortSignal; state(): AgentState; dispatch(event: AnyEvent): Promise<void> } | undefined;
  const scope: RunScope = {
    runId,
    llm: options.llm,
    ...(options.workspace !== undefined ? { workspace: options.workspace } : {}),
    ...hostCallbacksOf(options),
    resource: (key, open, close) => pool.get(key, open, close),
    ...(options.sandbox
      ? { sandbox: sandboxOf(options.sandbox, pool, runId, options.workspace, () => scope.signal) }
      : {}),
    emit: (item) => void announce(item),
    takesDeltas: () => sink !== undefined || (options.emitter?.listenerCount('delta') ?? 0) > 0,
    changeTools: async ({ add = [], remove = [], exact = false }) => {
      if (!control) return;
      for (const name of remove) tools.delete(name);
      for (const tool of add) tools.set(tool.spec.name, tool);
      const replaced = new Set([...remove, ...add.map((t) => t.spec.name)]);
      const { tools: listed, unavailableTools = [] } = control.state();
      // Tools already gone stay gone: only the implementations this run has are offered.
      const now = (listed ?? agent.config.tools).filter((t) => !unavailableTools.includes(t.name));
      await control.dispatch({
        type: 'toolsChanged',
        tools: [...now.filter((t) => !replaced.has(t.name)), ...add.map((t) => t.spec)],
        ...(exact ? { exact } : {}),
      });
    },
    // Live: the driver's signal, once the run has started.
    get signal() {
      return control?.signal ?? AbortSignal.abort(new Error('the run has not started'));
    },
  };
  const machine: Machine<AgentState, AnyEvent, AnyEffect> = {
    step: (state, event) => (agent.step ?? step)(agent.config, state, event),
    isFinal,
    cancelled: (reason) => ({ type: 'cancelled', reason }),
    faulted: (error) => ({ type: 'faulted', error }),
  };
  const defaults = agentPerformers({
    agent,
    scope,
    tools,
    announce,
    ...(options.toolTimeoutMs !== undefined ? { toolTimeoutMs: options.toolTimeoutMs } : {}),
    ...(options.maxParallelTools !== undefined ? { maxParallelTools: options.maxParallelTools } : {}),
  });
  const hosts = typeof options.performers === 'function' ? options.performers(defaults) : options.performers;
  const performers = askingAfterCheck({ ...defaults, ...hosts }, tools);

  let driven: Awaited<ReturnType<typeof drive<AgentState, AnyEvent, AnyEffect>>>;
  try {
    driven = await drive(
      {
        machine,
        performers,
        ...(options.signal ? { signal: options.signal } : {}),
        announce: (item) => announce(item as RunItem),
        quiet: (effect) => effect.type === 'emit' || effect.type === 'finish',
        attach: (driver) => {
          control = driver;
        },
        ...(store || options.checkpoint
          ? {
              save: async (state: AgentState) => {
                if (store) version = await store.save(runId, state, version);
                await options.checkpoint?.(state);
              },
            }
          : {}),
      },
      from,
      opening,
    );
  } finally {
    ended = true;
    activeStates.delete(current);
    activeStates.delete(from);
    activeStates.delete(saved);
    if (!options.resources) await pool.close();
  }
  const { state, fault } = driven;
  // A run whose last state could not be saved did not end as it says: report the fault.
  const failed = fault !== undefined && state.status !== 'failed';
  const outcome: RunOutcome = {
    status: failed ? 'failed' : state.status,
    answer: state.answer ?? '',
    usage: state.usage,
    pending: failed ? [] : pendingInputs(agent.config, state),
    runId,
    state,
    ...(failed ? { finishReason: 'error' as const } : state.finishReason ? { finishReason: state.finishReason } : {}),
    ...(failed ? { error: fault } : state.error ? { error: state.error } : {}),
  };
  await deliver({ type: 'result', result: outcome });
  return outcome;
}
