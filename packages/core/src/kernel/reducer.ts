import { hasErrorCode, OpenManusError } from '../errors.js';
import type { AgentConfig } from './agent.js';
import { compactionRequest, dueCompaction, withHistoryTokens } from './compaction.js';
import type { AnyEffect, Effect, LlmRequest, Observation, RunResult } from './effects.js';
import type { AnyEvent, HostAnswer } from './events.js';
import { shrinkHistory } from './historyWindow.js';
import {
  assistantMessage,
  type ImageData,
  lastAnswer,
  type Message,
  type ReasoningPart,
  type ToolCall,
} from './messages.js';
import {
  defaultPolicies,
  isStepLimit,
  isStop,
  type Policy,
  type PolicyContext,
  type PolicyHook,
  type Stop,
} from './policies.js';
import { buildRequest } from './request.js';
import type { RunError } from './runError.js';
import {
  type AgentState,
  addUsage,
  emptyUsage,
  type FinishReason,
  isFinal,
  type PendingCall,
  type PendingInput,
  type RunStatus,
  SCHEMA_VERSION,
  type Turn,
  type Usage,
} from './state.js';
import type { ToolSpec } from './tool.js';
import { mergeToolList, unavailableToolError } from './toolList.js';

/**
 * The whole agent loop: think → act → observe, as a pure function of (config, state, event).
 * No clock, no randomness, no I/O: ids come from counters in the state. The rules around the
 * loop (step limit, token budget, stuck detection, terminal tools) are policies.
 */
export type Transition = readonly [AgentState, readonly Effect[]];

/** A step as the shell runs it: the default one, or a host's (policies, its own effects and events). */
export type StepFunction = (
  config: AgentConfig,
  state: AgentState,
  event: AnyEvent,
) => readonly [AgentState, readonly AnyEffect[]];

/** Thrown for an event the current state cannot take (a bug in the driver, not in the run). */
export class InvalidEventError extends OpenManusError<'INVALID_EVENT'> {
  static readonly codes = ['INVALID_EVENT'] as const;
  override readonly name = 'InvalidEventError';
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super('INVALID_EVENT', message, options);
  }
  static override isInstance(value: unknown): value is InvalidEventError {
    return hasErrorCode(value, InvalidEventError.codes);
  }
}

interface Rules {
  readonly config: AgentConfig;
  /** The policies around the loop, in order. */
  readonly policies: readonly Policy[];
  /** The step limit among them, reported with each step. */
  readonly maxSteps: number | undefined;
}

/**
 * Asks the policies that have `hook`, in order: the first answer that is not `undefined` decides
 * and ends the walk. A fold asks them all, gathering in `ask` and answering nothing.
 */
function askPolicies<Answer>(
  rules: Rules,
  hook: PolicyHook,
  ask: (policy: Policy) => Answer | undefined,
): Answer | undefined {
  for (const policy of rules.policies) {
    if (policy[hook] === undefined) continue;
    const answer = ask(policy);
    if (answer !== undefined) return answer;
  }
  return undefined;
}

/** A clear error for a list that is not policies, e.g. a factory not called (`terminalTools` for `terminalTools()`). */
function checkPolicies(policies: readonly unknown[]): void {
  for (const [index, policy] of policies.entries()) {
    if (typeof policy === 'function') {
      throw new TypeError(`policies[${index}] is a function, not a policy: call it (${policy.name}())`);
    }
    if (typeof policy !== 'object' || policy === null || typeof (policy as { name?: unknown }).name !== 'string') {
      throw new TypeError(`policies[${index}] is not a policy: expected an object with a name and hooks`);
    }
  }
}

export function initialState(): AgentState {
  return {
    schemaVersion: SCHEMA_VERSION,
    status: 'idle',
    step: 0,
    requestSeq: 0,
    messages: [],
    taskIndex: 0,
    policies: {},
    usage: emptyUsage,
    reprompted: false,
  };
}

/** The loop with these policies around it, in order. `step` is `createStep(defaultPolicies())`. */
export function createStep(
  policies: readonly Policy[] = defaultPolicies(),
): (config: AgentConfig, state: AgentState, event: AnyEvent) => Transition {
  checkPolicies(policies);
  const maxSteps = policies.find(isStepLimit)?.maxSteps;
  return (config, state, event) => reduce({ config, policies, maxSteps }, state, event);
}

export const step = createStep();

/** Starts a run: the fresh state plus the effects of its first step. */
export function initialStep(config: AgentConfig, input: string, image?: ImageData): Transition {
  return step(config, initialState(), image ? { type: 'started', input, image } : { type: 'started', input });
}

function reduce(rules: Rules, state: AgentState, event: AnyEvent): Transition {
  switch (event.type) {
    case 'started': {
      if (!isFinal(state) && state.status !== 'idle') {
        throw new InvalidEventError(`cannot start a new task while the run is ${state.status}`);
      }
      const task: Message = event.image
        ? { role: 'user', content: event.input, image: event.image }
        : { role: 'user', content: event.input };
      const { finishReason: _r, answer: _a, error: _e, ...rest } = state;
      const messages = state.messages.concat([task]);
      const started: AgentState = {
        ...rest,
        ...(event.runId ? { runId: event.runId } : {}),
        status: 'awaiting_llm',
        step: 0,
        messages,
        taskIndex: state.messages.length,
        reprompted: false,
      };
      return think(rules, withHistoryTokens(rules.config, state, started));
    }
    case 'resumed': {
      const named = reopenPaused(event.runId && !state.runId ? { ...state, runId: event.runId } : state);
      const interrupted = interruptedCalls(rules, named);
      if (interrupted.length > 0) return reportInterrupted(rules, named, interrupted);
      if (named.status !== 'awaiting_llm') return [named, outstandingEffects(rules, named)];
      // The request is rebuilt exactly; the step it belongs to was announced before.
      const [next, effects] = request(rules, named);
      return [next, next === named ? effects.filter((e) => e.type === 'callLlm') : effects];
    }
    case 'cancelled':
      return close(rules, state, 'cancelled', event.reason ? { code: 'CANCELLED', message: event.reason } : undefined);
    case 'faulted':
      return close(rules, state, 'error', event.error);
    case 'llmResponded':
      if (awaitsCompaction(state, event.effectId)) return compacted(rules, state, event);
      if (!awaitsLlm(state, event.effectId)) return [state, []];
      return act(
        rules,
        state,
        addUsage(state.usage, { inputTokens: 0, outputTokens: 0, ...event.usage, llmCalls: 1 }),
        event.content,
        event.toolCalls,
        event.reasoning,
      );
    case 'llmFailed':
      if (awaitsCompaction(state, event.effectId)) return compacted(rules, state, event);
      if (!awaitsLlm(state, event.effectId)) return [state, []];
      return finish({ ...state, usage: { ...state.usage, llmCalls: state.usage.llmCalls + 1 } }, 'error', '', {
        ...event.error,
        message: `the model request failed: ${event.error.message}`,
      });
    case 'toolCompleted': {
      const found = runningCall(state, event.effectId);
      if (!found) return [state, []];
      const counted = event.usage ? { ...state, usage: addUsage(state.usage, event.usage) } : state;
      const kept =
        event.data === undefined
          ? counted
          : { ...counted, toolData: { ...state.toolData, [found.pending.call.name]: event.data } };
      const output = truncate(event.output, rules.config.maxObserve);
      const brief = event.brief === undefined ? undefined : truncate(event.brief, rules.config.maxObserve);
      return settle(
        rules,
        kept,
        found.index,
        answered(found.pending, output, event.isError === true, { image: event.image, brief }),
      );
    }
    case 'toolStarted': {
      const found = runningCall(state, event.effectId);
      if (!found || !state.turn) return [state, []];
      return [{ ...state, turn: replaceCall(state.turn, found.index, { ...found.pending, started: true }) }, []];
    }
    case 'toolProgressed': {
      const found = runningCall(state, event.effectId);
      if (!found || !state.turn) return [state, []];
      const turn = replaceCall(state.turn, found.index, { ...found.pending, progress: event.progress });
      const usage = event.usage ? addUsage(state.usage, event.usage) : state.usage;
      return [{ ...state, turn, usage }, []];
    }
    case 'toolSuspended': {
      const found = runningCall(state, event.effectId);
      if (!found || !state.turn) return [state, []];
      // Paused again: the answer it had is spent (the next one comes with the new question's id).
      const { answer: _spent, ...pending } = found.pending;
      const suspended = { ...pending, progress: event.progress, waiting: event.waiting };
      const turn = replaceCall(state.turn, found.index, suspended);
      const usage = event.usage ? addUsage(state.usage, event.usage) : state.usage;
      return [{ ...state, turn, usage, status: statusOf(turn) }, []];
    }
    case 'callRefused': {
      const found = callWithEffect(state, event.effectId);
      if (found?.pending.phase !== 'approval' && found?.pending.phase !== 'human') return [state, []];
      return settle(rules, state, found.index, answered(found.pending, event.error, true));
    }
    case 'humanReplied':
    case 'approvalGiven':
    case 'approvalDenied':
      return answerHost(rules, state, event);
    case 'contextGathered': {
      const context = state.context;
      const provider = context?.pending.find((name) => contextEffectId(state, name) === event.effectId);
      if (state.status !== 'awaiting_context' || !context || provider === undefined) return [state, []];
      const gathered = { ...context.gathered, [provider]: event.error === undefined ? event.data : undefined };
      const pending = context.pending.filter((name) => name !== provider);
      const next: AgentState = { ...state, context: { pending, gathered } };
      return pending.length > 0 ? [next, []] : request(rules, { ...next, status: 'awaiting_llm' });
    }
    case 'toolsChanged':
      return [changeTools(rules, state, event.tools, event.exact === true), []];
    default:
      // A host's own event: its own step handles it; the loop has nothing to do with it.
      return [state, []];
  }
}

/** A person's answer: to a call of this turn, or to a tool paused on a person (forwarded to it). */
function answerHost(rules: Rules, state: AgentState, event: HostAnswer): Transition {
  const phase = event.type === 'humanReplied' ? 'human' : 'approval';
  const found = callWithEffect(state, event.effectId);
  if (found && found.pending.phase === phase && state.turn) {
    const { pending, index } = found;
    if (event.type === 'humanReplied') return settle(rules, state, index, answered(pending, event.answer, false));
    if (event.type === 'approvalDenied') {
      const why = event.reason ? `: ${event.reason}` : '.';
      return settle(rules, state, index, answered(pending, `Error: the user did not approve this call${why}`, true));
    }
    const spec = findTool(rules.config, state, pending.call.name);
    const released: PendingCall = { ...pending, phase: spec?.human ? 'human' : 'running' };
    const turn = replaceCall(state.turn, index, released);
    return [{ ...state, turn, status: statusOf(turn) }, [dispatch(state, released, index, spec)]];
  }
  // `running-3-0/approval-2-0`: the answer belongs to what the tool of `running-3-0` waits for.
  const slash = event.effectId.indexOf('/');
  if (slash < 0 || !state.turn) return [state, []];
  const inner = event.effectId.slice(slash + 1);
  const owner = runningCall(state, event.effectId.slice(0, slash), true);
  if (!owner?.pending.waiting?.some((input) => input.effectId === inner && input.kind === phase)) return [state, []];
  const { waiting: _answered, ...rest } = owner.pending;
  const resumed: PendingCall = { ...rest, answer: { ...event, effectId: inner } };
  const turn = replaceCall(state.turn, owner.index, resumed);
  const next: AgentState = { ...state, turn, status: statusOf(turn) };
  const spec = findTool(rules.config, state, resumed.call.name);
  return [next, [dispatch(next, resumed, owner.index, spec)]];
}

function think(rules: Rules, state: AgentState): Transition {
  const stop = askPolicies(rules, 'beforeStep', (policy) =>
    policy.beforeStep?.(contextFor(policy, rules.config, state)),
  );
  if (stop) return stopRun(rules, state, stop);
  const providers = rules.config.contextProviders;
  const next: AgentState = {
    ...withoutContext(state),
    status: 'awaiting_llm',
    step: state.step + 1,
    requestSeq: state.requestSeq + 1,
  };
  if (!providers?.length) return request(rules, next);
  const wanted = providers.filter((provider) => provider.when(next)).map((p) => p.name);
  if (wanted.length === 0) return request(rules, next);
  // Fresh context first (e.g. the browser page), then the request that uses it.
  const gathering: AgentState = { ...next, status: 'awaiting_context', context: { pending: wanted, gathered: {} } };
  return [gathering, gatherEffects(gathering)];
}

/** The state without the last step's gathered context (copied only when it has some). */
function withoutContext(state: AgentState): AgentState {
  if (!state.context) return state;
  const { context: _previous, ...rest } = state;
  return rest;
}

const contextEffectId = (state: AgentState, provider: string) => `context-${state.requestSeq}-${provider}`;

function gatherEffects(state: AgentState): Effect[] {
  return (state.context?.pending ?? []).map((provider) => ({
    type: 'gatherContext',
    id: contextEffectId(state, provider),
    provider,
  }));
}

/** The model request for the current step, as the policies shape it — or their reason to stop instead. */
function prepareRequest(rules: Rules, state: AgentState): Stop | { request: LlmRequest; notes: Observation[] } {
  const notes: Observation[] = [];
  const hints: string[] = [];
  askPolicies(rules, 'prompt', (policy) => {
    const hint = policy.prompt?.(contextFor(policy, rules.config, state));
    if (hint) {
      hints.push(hint);
      notes.push({ kind: 'hint', policy: policy.name, hint });
    }
    return undefined;
  });
  let { request } = buildRequest(rules.config, state, hints);
  const stop = askPolicies(rules, 'beforeRequest', (policy) => {
    const decision = policy.beforeRequest?.(contextFor(policy, rules.config, state), request);
    if (!decision || isStop(decision)) return decision;
    request = decision.request;
    if (decision.notes) notes.push(...decision.notes);
    return undefined;
  });
  return stop ?? { request, notes };
}

/**
 * The step's model request — with the history shrunk first if it passed a limit, and after a summary
 * of older turns when it has grown past the summary's threshold.
 */
function request(rules: Rules, before: AgentState): Transition {
  const { state, shrunk } = shrinkHistory(rules.config, before);
  const trimmed: Observation[] = shrunk ? [{ kind: 'memoryTrimmed', ...shrunk }] : [];
  const compaction = state.compacting ?? dueCompaction(rules.config, state);
  if (!compaction) return sendRequest(rules, state, trimmed);
  const compacting = state.compacting ? state : { ...state, compacting: compaction };
  const id = compactionEffectId(state);
  const summarise: Effect = { type: 'callLlm', id, request: compactionRequest(rules.config, state, compaction.upTo) };
  return [compacting, [...trimmed.map((observation): Effect => ({ type: 'emit', observation })), summarise]];
}

const compactionEffectId = (state: AgentState) => `compact-${state.requestSeq}`;
const awaitsCompaction = (state: AgentState, effectId: string) =>
  state.compacting !== undefined && state.status === 'awaiting_llm' && effectId === compactionEffectId(state);

/** The summary written (or why not), then the step's request, which carries it. */
function compacted(
  rules: Rules,
  state: AgentState,
  event: Extract<AnyEvent, { type: 'llmResponded' | 'llmFailed' }>,
): Transition {
  const { compacting, ...rest } = state;
  const upTo = compacting?.upTo ?? 0;
  const text = event.type === 'llmResponded' ? event.content.trim() : '';
  const usage = addUsage(state.usage, {
    inputTokens: 0,
    outputTokens: 0,
    ...(event.type === 'llmResponded' ? event.usage : undefined),
    llmCalls: 1,
  });
  if (!text) {
    const error = event.type === 'llmFailed' ? event.error.message : 'the model wrote an empty summary';
    const [next, effects] = sendRequest(rules, { ...rest, usage });
    return [next, [{ type: 'emit', observation: { kind: 'compactionFailed', error } }, ...effects]];
  }
  const from = state.summary?.upTo ?? 0;
  // The task is sent as it is, never summarised.
  const summarised = upTo - from - (state.taskIndex >= from && state.taskIndex < upTo ? 1 : 0);
  const withSummary = withHistoryTokens(rules.config, state, { ...rest, usage, summary: { text, upTo } });
  const [next, effects] = sendRequest(rules, withSummary);
  return [next, [{ type: 'emit', observation: { kind: 'memoryCompacted', summarised } }, ...effects]];
}

/** Emits the model request for the current step (after `notes` of its own), unless a policy stops the run first. */
function sendRequest(rules: Rules, state: AgentState, notes: readonly Observation[] = []): Transition {
  const prepared = prepareRequest(rules, state);
  if (isStop(prepared)) return stopRun(rules, state, prepared);
  const { maxSteps } = rules;
  const started: Observation =
    maxSteps === undefined
      ? { kind: 'stepStarted', step: state.step }
      : { kind: 'stepStarted', step: state.step, maxSteps };
  // A re-prompt for a missing tool call stays within its step: no second "step started".
  const effects: Effect[] = state.reprompted ? [] : [{ type: 'emit', observation: started }];
  for (const observation of notes) effects.push({ type: 'emit', observation });
  for (const observation of prepared.notes) effects.push({ type: 'emit', observation });
  effects.push({ type: 'callLlm', id: llmEffectId(state), request: prepared.request });
  return [state, effects];
}

const llmEffectId = (state: AgentState) => `llm-${state.requestSeq}`;
const awaitsLlm = (state: AgentState, effectId: string) =>
  state.status === 'awaiting_llm' && !state.compacting && effectId === llmEffectId(state);

/** The model's reply (its usage counted in `usage`): kept in memory, then its calls admitted and dispatched. */
function act(
  rules: Rules,
  state: AgentState,
  usage: Usage,
  content: string,
  rawCalls: readonly ToolCall[],
  reasoning?: readonly ReasoningPart[],
): Transition {
  const { config } = rules;
  const ignoring = config.toolChoice === 'none' && rawCalls.length > 0;
  const calls: ToolCall[] = [];
  const oversized: (number | undefined)[] = [];
  if (!ignoring) {
    const unique = withUniqueIds(rawCalls, state.requestSeq);
    for (const call of unique) {
      const named = shortName(call);
      // Oversized arguments are answered with an error and never kept: the call stays (with its
      // id and name, so history still pairs it with its answer), its arguments a short placeholder.
      const tooLong = named.arguments.length > config.maxToolArgsChars;
      oversized.push(tooLong ? named.arguments.length : undefined);
      calls.push(tooLong ? { ...named, arguments: TRUNCATED_ARGUMENTS } : named);
    }
  }
  const message = assistantMessage(content, calls, reasoning);
  const said = withHistoryTokens(config, state, { ...state, usage, messages: [...state.messages, message] });
  const acted = remember(rules, said, message);
  const notes: Effect[] = ignoring
    ? [{ type: 'emit', observation: { kind: 'toolCallsIgnored', count: rawCalls.length } }]
    : [];

  if (calls.length === 0) {
    if (config.toolChoice === 'required') {
      if (!state.reprompted) {
        const [next, effects] = request(rules, { ...acted, reprompted: true, requestSeq: state.requestSeq + 1 });
        return [next, [...notes, ...effects]];
      }
      return finish(acted, 'error', content, {
        code: 'NO_TOOL_CALL',
        message: 'tool_choice is "required" but the model answered twice without a tool call',
      });
    }
    if (config.finishOnText && content.trim() !== '') {
      const [next, effects] = finish(acted, 'answered', content);
      return [next, [...notes, ...effects]];
    }
    const [next, effects] = think(rules, { ...acted, reprompted: false });
    return [next, [...notes, ...effects]];
  }

  const pendings = calls.map((call, i) => admit(rules, acted, call, oversized[i]));
  const turn: Turn = { calls: pendings };
  const opened = { ...acted, reprompted: false, turn, status: statusOf(turn) };
  const effects: Effect[] = [];
  for (let index = 0; index < pendings.length; index++) {
    const pending = pendings[index] as PendingCall;
    if (pending.phase !== 'done')
      effects.push(dispatch(opened, pending, index, findTool(config, opened, pending.call.name)));
  }
  if (effects.length === 0) return endStep(rules, opened, turn);
  return [opened, effects];
}

/** Each policy with `afterResponse` records what it needs from the model's reply. */
function remember(rules: Rules, state: AgentState, message: Message): AgentState {
  if (message.role !== 'assistant') return state;
  let policies = state.policies;
  askPolicies(rules, 'afterResponse', (policy) => {
    // Each policy sees what the ones before it remembered.
    const seen = policies === state.policies ? state : { ...state, policies };
    policies = { ...policies, [policy.name]: policy.afterResponse?.(contextFor(policy, rules.config, seen), message) };
    return undefined;
  });
  return policies === state.policies ? state : { ...state, policies };
}

/** What a call's arguments are replaced with in memory when they were over `maxToolArgsChars`. */
const TRUNCATED_ARGUMENTS = '{"truncated":true}';

/** No tool has a name this long (the API allows 64 characters): a longer one is cut before it is kept or echoed. */
const MAX_TOOL_NAME = 1_000;
const shortName = (call: ToolCall): ToolCall =>
  call.name.length > MAX_TOOL_NAME ? { ...call, name: `${call.name.slice(0, 100)}…` } : call;

/**
 * Validates a call's size, name and JSON; a bad one is answered at once with an error the model
 * sees. `argsLength` is the length of arguments too long to keep (already replaced in `call`).
 */
function admit(rules: Rules, state: AgentState, call: ToolCall, argsLength?: number): PendingCall {
  if (argsLength !== undefined) {
    return refused(
      call,
      `Error: the arguments for ${call.name} are ${argsLength} characters, over the limit of ` +
        `${rules.config.maxToolArgsChars}; send less (write large content to a file with python_execute instead)`,
    );
  }
  if (state.unavailableTools?.includes(call.name)) return refused(call, unavailableToolError(call.name));
  const spec = findTool(rules.config, state, call.name);
  if (!spec) {
    const gone = state.unavailableTools ?? [];
    const known =
      (state.tools ?? rules.config.tools)
        .map((t) => t.name)
        .filter((name) => !gone.includes(name))
        .join(', ') || 'none';
    return refused(call, `Error: unknown tool '${call.name}'. Available tools: ${known}.`);
  }
  let args: unknown;
  try {
    args = JSON.parse(call.arguments.trim() === '' ? '{}' : call.arguments);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return refused(call, `Error: the arguments for ${call.name} are not valid JSON (${reason}). Send one JSON object.`);
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return refused(call, `Error: the arguments for ${call.name} must be a JSON object.`, args);
  }
  const refusal = askPolicies(
    rules,
    'admitCall',
    (policy) => policy.admitCall?.(contextFor(policy, rules.config, state), call, spec) || undefined,
  );
  if (refusal) return refused(call, refusal, args);
  const gated =
    spec.needsApproval === true ||
    askPolicies(rules, 'needsApproval', (policy) =>
      policy.needsApproval?.(contextFor(policy, rules.config, state), call, args, spec) ? true : undefined,
    ) === true;
  const phase = gated ? 'approval' : spec.human ? 'human' : 'running';
  return { call, phase, args };
}

/** A call answered at once with an error the model sees: it never runs. */
const refused = (call: ToolCall, message: string, args?: unknown): PendingCall =>
  answered({ call, phase: 'done', args }, message, true);

const callEffectId = (state: AgentState, pending: PendingCall, index: number) =>
  `${pending.phase}-${state.requestSeq}-${index}`;

function dispatch(state: AgentState, pending: PendingCall, index: number, spec: ToolSpec | undefined): Effect {
  const id = callEffectId(state, pending, index);
  if (pending.phase === 'approval') return { type: 'requestApproval', id, call: pending.call, args: pending.args };
  if (pending.phase === 'human')
    return { type: 'askHuman', id, call: pending.call, question: questionOf(pending, spec), args: pending.args };
  return {
    type: 'callTool',
    id,
    call: pending.call,
    args: pending.args,
    parallelSafe: spec?.parallelSafe === true,
    ...(spec?.timeoutMs !== undefined ? { timeoutMs: spec.timeoutMs } : {}),
    ...(pending.progress !== undefined ? { progress: pending.progress } : {}),
    ...(pending.answer ? { answer: pending.answer } : {}),
  };
}

function questionOf(pending: PendingCall, spec: ToolSpec | undefined): string {
  const question = (pending.args as Record<string, unknown>)[spec?.human?.questionArg ?? 'question'];
  return typeof question === 'string' ? question : JSON.stringify(pending.args);
}

/** The call of this turn that effect `effectId` serves, if it is still waiting for that effect. */
function callWithEffect(state: AgentState, effectId: string): { pending: PendingCall; index: number } | undefined {
  if (isFinal(state)) return undefined;
  const calls = state.turn?.calls ?? [];
  for (let index = 0; index < calls.length; index++) {
    const pending = calls[index];
    if (pending && pending.phase !== 'done' && callEffectId(state, pending, index) === effectId)
      return { pending, index };
  }
  return undefined;
}

/** A running call answered by `effectId`; a call paused on a person only when `suspended` is asked for. */
function runningCall(state: AgentState, effectId: string, suspended = false) {
  const found = callWithEffect(state, effectId);
  return found?.pending.phase === 'running' && (found.pending.waiting !== undefined) === suspended ? found : undefined;
}

/** Answers one pending call; when it was the last, the step ends. */
function settle(rules: Rules, state: AgentState, index: number, answer: PendingCall): Transition {
  if (!state.turn) return [state, []];
  const turn = replaceCall(state.turn, index, answer);
  if (turn.calls.some((c) => c.phase !== 'done')) return [{ ...state, turn, status: statusOf(turn) }, []];
  return endStep(rules, state, turn);
}

/** One tool message per call, in call order; a call that never answered says it was cancelled. */
function observationsOf(calls: readonly PendingCall[]): Message[] {
  return calls.map((c) => ({
    role: 'tool',
    content: c.phase === 'done' ? (c.output ?? '') : 'Error: cancelled before it finished.',
    toolCallId: c.call.id,
    name: c.call.name,
    ...(c.image ? { image: c.image } : {}),
    ...(c.brief !== undefined ? { brief: c.brief } : {}),
  }));
}

/** Every call of `turn` has answered: observations go into memory, then the policies, then the next step. */
function endStep(rules: Rules, state: AgentState, turn: Turn): Transition {
  const { turn: _ended, ...rest } = state;
  const { calls } = turn;
  const observations = observationsOf(calls);
  const messages = state.messages.concat(observations);
  const observed = withHistoryTokens(rules.config, state, { ...rest, messages });
  const stop = askPolicies(rules, 'afterStep', (policy) =>
    policy.afterStep?.(contextFor(policy, rules.config, observed), calls),
  );
  return stop ? stopRun(rules, observed, stop) : think(rules, observed);
}

const contextFor = (policy: Policy, config: AgentConfig, state: AgentState): PolicyContext => ({
  config,
  state,
  memory: state.policies[policy.name],
});

function stopRun(rules: Rules, state: AgentState, stop: Stop): Transition {
  if (stop.say) {
    return finish(
      withHistoryTokens(rules.config, state, {
        ...state,
        messages: state.messages.concat([assistantMessage(stop.say)]),
      }),
      stop.reason,
      stop.say,
      stop.error ?? { code: 'POLICY_STOP', message: stop.say },
    );
  }
  return finish(state, stop.reason, stop.answer ?? lastAnswer(state.messages), stop.error);
}

/** Ends a run from outside (cancel, a shell fault): open calls are answered, so the history stays valid. */
function close(rules: Rules, state: AgentState, reason: FinishReason, why: RunError | undefined): Transition {
  if (isFinal(state)) return [state, []];
  const { turn, compacting: _unwritten, ...rest } = state;
  const closed = turn
    ? withHistoryTokens(rules.config, state, { ...rest, messages: state.messages.concat(observationsOf(turn.calls)) })
    : rest;
  return finish(closed, reason, lastAnswer(state.messages), why);
}

function finish(state: AgentState, reason: FinishReason, answer: string, error?: RunError): Transition {
  const next: AgentState = {
    ...state,
    status: reason === 'error' ? 'failed' : 'finished',
    finishReason: reason,
    answer,
    ...(error && reason !== 'answered' && reason !== 'terminated' ? { error } : {}),
  };
  return [next, [{ type: 'finish', result: resultOf(next) }]];
}

function resultOf(state: AgentState): RunResult {
  return {
    finishReason: state.finishReason ?? 'error',
    answer: state.answer ?? '',
    usage: state.usage,
    ...(state.error ? { error: state.error } : {}),
  };
}

/** The effects a state is waiting on: what a resumed run must (re)do. Calls paused on a person wait for them. */
function outstandingEffects(rules: Rules, state: AgentState): readonly Effect[] {
  if (isFinal(state)) return [{ type: 'finish', result: resultOf(state) }];
  if (state.status === 'awaiting_context') return gatherEffects(state);
  const calls = state.turn?.calls ?? [];
  return calls.flatMap((pending, index) =>
    pending.phase === 'done' ? [] : [dispatch(state, pending, index, findTool(rules.config, state, pending.call.name))],
  );
}

/** Calls of at-most-once tools that had begun when the run stopped: they must not run again. */
function interruptedCalls(rules: Rules, state: AgentState): number[] {
  if (isFinal(state)) return [];
  return (state.turn?.calls ?? []).flatMap((c, index) =>
    c.phase === 'running' && c.started && findTool(rules.config, state, c.call.name)?.atMostOnce ? [index] : [],
  );
}

/** What the model is told of an at-most-once call a crash interrupted (by this reducer, or a durable engine's replay). */
export const interruptedNote = (tool: string): string =>
  `Error: ${tool} was interrupted while it ran (the run stopped before its result came back). ` +
  'It may or may not have taken effect, so it was not run again: check before trying it again.';

/** Answers each interrupted call with what is known (nothing), then resumes what else was waiting. */
function reportInterrupted(rules: Rules, state: AgentState, indexes: readonly number[]): Transition {
  let next = state;
  const effects: Effect[] = [];
  for (const index of indexes) {
    const pending = next.turn?.calls[index];
    if (!pending) continue;
    const [settled, more] = settle(rules, next, index, answered(pending, interruptedNote(pending.call.name), true));
    next = settled;
    effects.push(...more);
  }
  if (next.turn) effects.push(...outstandingEffects(rules, next));
  return [next, effects];
}

/**
 * A resumed run runs again the tools that had paused on a person: from their progress they ask
 * again (the host may have given callbacks this time) or pause again.
 */
function reopenPaused(state: AgentState): AgentState {
  if (!state.turn?.calls.some((c) => c.waiting)) return state;
  const turn = { calls: state.turn.calls.map(({ waiting: _again, ...call }) => call) };
  return { ...state, turn, status: statusOf(turn) };
}

/** What a paused run waits for from people, with the effect ids their answers must carry. */
export function pendingInputs(config: AgentConfig, state: AgentState): readonly PendingInput[] {
  if (isFinal(state)) return [];
  const calls = state.turn?.calls ?? [];
  return calls.flatMap((pending, index): PendingInput[] => {
    const effectId = callEffectId(state, pending, index);
    if (pending.phase === 'approval') return [{ kind: 'approval', effectId, call: pending.call, args: pending.args }];
    if (pending.phase === 'human') {
      const question = questionOf(pending, findTool(config, state, pending.call.name));
      return [{ kind: 'human', effectId, question, call: pending.call }];
    }
    return (pending.waiting ?? []).map((input) => ({ ...input, effectId: `${effectId}/${input.effectId}` }));
  });
}

function answered(
  pending: PendingCall,
  output: string,
  isError: boolean,
  extra: { readonly image?: ImageData | undefined; readonly brief?: string | undefined } = {},
): PendingCall {
  return {
    call: pending.call,
    args: pending.args,
    phase: 'done',
    output,
    ...(isError ? { isError } : {}),
    ...(extra.image ? { image: extra.image } : {}),
    ...(extra.brief !== undefined ? { brief: extra.brief } : {}),
  };
}

function replaceCall(turn: Turn, index: number, updated: PendingCall): Turn {
  return { calls: turn.calls.map((c, i) => (i === index ? updated : c)) };
}

function statusOf(turn: Turn): RunStatus {
  // Most turns: every call running or answered, none waiting on a person.
  if (turn.calls.every((c) => (c.phase === 'running' || c.phase === 'done') && !c.waiting)) return 'awaiting_tools';
  const waitsFor = (kind: PendingInput['kind']) =>
    turn.calls.some((c) => c.phase === kind || c.waiting?.some((input) => input.kind === kind));
  if (waitsFor('approval')) return 'awaiting_approval';
  if (waitsFor('human')) return 'awaiting_human';
  return 'awaiting_tools';
}

/** The tools the model sees now: the run's own list once it changed, else the config's. */
/** The run's tools after a change: merged into the list the model saw (a stable prefix), or exactly as given. */
function changeTools(rules: Rules, state: AgentState, next: readonly ToolSpec[], exact: boolean): AgentState {
  const { unavailableTools: _before, ...rest } = state;
  if (exact) return { ...rest, tools: next };
  const { tools, unavailable } = mergeToolList(state.tools ?? rules.config.tools, next);
  return unavailable.length > 0 ? { ...rest, tools, unavailableTools: unavailable } : { ...rest, tools };
}

/** The spec of a tool the run has now (one listed but gone is not). */
function findTool(config: AgentConfig, state: AgentState, name: string): ToolSpec | undefined {
  if (state.unavailableTools?.includes(name)) return undefined;
  const tools = state.tools ?? config.tools;
  return tools.find((tool) => tool.name === name);
}

/** Models sometimes omit or repeat call ids; every call of a turn needs its own. */
function withUniqueIds(calls: readonly ToolCall[], requestSeq: number): readonly ToolCall[] {
  // Most turns: one call, with an id.
  if (calls.length === 1 && (calls[0] as ToolCall).id) return calls;
  const seen = new Set<string>();
  return calls.map((call, i) => {
    const id = call.id && !seen.has(call.id) ? call.id : `call_${requestSeq}_${i}`;
    seen.add(id);
    return id === call.id ? call : { ...call, id };
  });
}

function truncate(output: string, max: number | undefined): string {
  if (max === undefined || output.length <= max) return output;
  return `${output.slice(0, max)}\n…[observation truncated: ${output.length - max} more characters]`;
}
