import type { AgentConfig } from './agent.js';
import type { LlmRequest, Observation } from './effects.js';
import { type AssistantMessage, lastAnswer, type ToolCall } from './messages.js';
import type { RunError } from './runError.js';
import type { AgentState, FinishReason, PendingCall } from './state.js';
import { recordTurn, STUCK_WINDOW, type StuckMemory, type StuckThresholds } from './stuck.js';
import { requestTokens, tokenizerReady } from './tokens.js';
import type { ToolSpec } from './tool.js';

/** What a policy sees: the agent, the run, and what the policy itself remembered last time. */
export interface PolicyContext<Memory = unknown> {
  readonly config: AgentConfig;
  readonly state: AgentState;
  /** `state.policies[name]`: what this policy's `afterResponse` returned last (nothing before its first). */
  readonly memory: Memory | undefined;
}

/** A policy's decision to end the run here. */
export interface Stop {
  readonly reason: FinishReason;
  /** Why, for the host (`RunResult.error`). */
  readonly error?: RunError;
  /** The run's answer; by default the last thing the assistant said. */
  readonly answer?: string;
  /**
   * Also recorded as an assistant message and answer: the user reads why it stopped. It is the
   * error's message too when `error` is not given (code `POLICY_STOP`).
   */
  readonly say?: string;
}

/**
 * A rule around the think → act → observe loop, as pure hooks the reducer calls at fixed points,
 * with its settings given when it is made (`stepLimit(30)`). The default `step` is the loop plus
 * `defaultPolicies()`; an agent may replace, drop or add policies (`createAgent({ policies })`).
 * Every hook is optional and must be pure. `Memory` is what the policy keeps between steps
 * (`state.policies[name]`, saved with the state: plain JSON data).
 */
export interface Policy<Memory = unknown> {
  readonly name: string;
  /** Before a step starts: stop the run instead (a step limit, a budget in dollars). */
  beforeStep?(context: PolicyContext<Memory>): Stop | undefined;
  /** A line for the next request's prompt (never stored in memory). */
  prompt?(context: PolicyContext<Memory>): string | undefined;
  /** The request is built: send it (maybe changed, with notes for the host), or stop instead. */
  beforeRequest?(
    context: PolicyContext<Memory>,
    request: LlmRequest,
  ): Stop | { readonly request: LlmRequest; readonly notes?: readonly Observation[] } | undefined;
  /** The model replied: what the policy remembers from now on (its `memory`). */
  afterResponse?(context: PolicyContext<Memory>, message: AssistantMessage): Memory;
  /** A call the tool does not gate: should it wait for a person's approval first? (`true` asks.) */
  needsApproval?(context: PolicyContext<Memory>, call: ToolCall, args: unknown, spec: ToolSpec): boolean | undefined;
  /** A call is about to run: a message refuses it (the model sees the message as the call's result). */
  admitCall?(context: PolicyContext<Memory>, call: ToolCall, spec: ToolSpec): string | undefined;
  /** Every call of the step has answered: stop the run here? */
  afterStep?(context: PolicyContext<Memory>, calls: readonly PendingCall[]): Stop | undefined;
}

/** The hooks of a policy, by name: what the reducer asks the policies for. */
export type PolicyHook = Exclude<keyof Policy, 'name'>;

/**
 * A policy whose memory has a type, checked in every hook:
 * `definePolicy<number>({ name: 'replies', afterResponse: ({ memory }) => (memory ?? 0) + 1 })`.
 * It fits any list of policies.
 */
export const definePolicy = <Memory = undefined>(policy: Policy<Memory>): Policy<Memory> => policy;

export const isStop = (value: object): value is Stop => 'reason' in value;

/** `stepLimit(n)`: the policy carries its limit, which the loop reports with each step (`stepStarted`). */
export interface StepLimit extends Policy<undefined> {
  readonly name: 'stepLimit';
  readonly maxSteps: number;
}

/**
 * OpenManus's `max_steps`: a task that has taken `maxSteps` steps finishes as `max_steps`, resumable
 * with a fresh step budget by a new message. Throws a RangeError unless `maxSteps` is a positive integer.
 */
export function stepLimit(maxSteps: number): StepLimit {
  if (!Number.isInteger(maxSteps) || maxSteps < 1) {
    throw new RangeError(`stepLimit(maxSteps): maxSteps must be a positive integer, got ${maxSteps}`);
  }
  return {
    name: 'stepLimit',
    maxSteps,
    beforeStep: ({ state }) =>
      state.step >= maxSteps
        ? { reason: 'max_steps', error: { code: 'MAX_STEPS', message: `reached the step limit (${maxSteps})` } }
        : undefined,
  };
}

/** Whether `policy` is a `stepLimit(n)`: `agent.policies?.find(isStepLimit)?.maxSteps` is the agent's limit. */
export const isStepLimit = (policy: Policy): policy is StepLimit =>
  policy.name === 'stepLimit' && typeof (policy as Partial<StepLimit>).maxSteps === 'number';

/** What `tokenBudget` is given. */
export interface TokenBudgetOptions {
  /** Most input tokens one request may carry (config.toml's `max_input_tokens`); a request over it is never sent. */
  readonly maxInputTokens: number;
  /** Counts a request's input tokens your own way (a provider's counter); by default the agent's `tokenizer` counts. */
  readonly count?: ((request: LlmRequest) => number) | undefined;
}

/** `tokenBudget({ maxInputTokens })`: the policy carries its settings. */
export interface InputTokenBudget extends Policy<undefined>, TokenBudgetOptions {
  readonly name: 'tokenBudget';
}

/**
 * A request over `maxInputTokens` is never sent: the run finishes as `token_limit` with the reason.
 * Counts come from `count` when given, else the agent's tokenizer once loaded (a run loads it
 * before its first step), else an estimate with a visible note — never an exception. Throws a
 * RangeError unless `maxInputTokens` is a positive integer.
 */
export function tokenBudget(options: TokenBudgetOptions): InputTokenBudget {
  const { maxInputTokens, count } = options;
  if (!Number.isInteger(maxInputTokens) || maxInputTokens < 1) {
    throw new RangeError(`tokenBudget: maxInputTokens must be a positive integer, got ${maxInputTokens}`);
  }
  return {
    name: 'tokenBudget',
    maxInputTokens,
    ...(count ? { count } : {}),
    beforeRequest: ({ config, state }, request) => {
      const exact = count !== undefined || tokenizerReady(config.tokenizer);
      const needed = count ? count(request) : requestTokens(request, exact ? config.tokenizer : 'estimate');
      const notes: Observation[] = exact ? [] : [{ kind: 'tokensEstimated', tokenizer: config.tokenizer }];
      if (needed <= maxInputTokens) return { request, notes };
      const say =
        `Stopped before step ${state.step}: the request needs ${needed} input tokens${estimateNote(config, exact, count)}, ` +
        `more than the limit of ${maxInputTokens}. It was not sent.`;
      return { reason: 'token_limit', say, error: { code: 'TOKEN_LIMIT', message: say } };
    },
  };
}

/** Whether `policy` is a `tokenBudget({ … })`, whose settings it carries. */
export const isTokenBudget = (policy: Policy): policy is InputTokenBudget =>
  policy.name === 'tokenBudget' && typeof (policy as Partial<InputTokenBudget>).maxInputTokens === 'number';

/** How a count was made, when it was not exact: a stop decided on an estimate must say so. */
function estimateNote(config: AgentConfig, exact: boolean, count?: (request: LlmRequest) => number): string {
  if (count) return '';
  if (!exact) return ` (estimated at 4 characters a token: the ${config.tokenizer} tokenizer was not loaded)`;
  return config.tokenizer === 'estimate' ? ' (estimated at 4 characters a token: the agent counts by estimate)' : '';
}

/** `stuckDetection(thresholds)`: the policy carries its thresholds. */
export interface StuckDetection extends Policy<StuckMemory>, StuckThresholds {
  readonly name: 'stuck';
}

/**
 * Repeated turns or calls add a one-off "change strategy" hint to the next request. By default
 * OpenManus's thresholds: `{ duplicates: 2, repeats: 3 }`. Throws a RangeError for a threshold that
 * is not an integer from 1 to STUCK_WINDOW (repeats are looked for among the recent turns only).
 */
export function stuckDetection(thresholds: Partial<StuckThresholds> = {}): StuckDetection {
  const { duplicates = 2, repeats = 3 } = thresholds;
  for (const [option, value] of [
    ['duplicates', duplicates],
    ['repeats', repeats],
  ] as const) {
    if (!Number.isInteger(value) || value < 1 || value > STUCK_WINDOW) {
      throw new RangeError(`stuckDetection: ${option} must be an integer from 1 to ${STUCK_WINDOW}, got ${value}`);
    }
  }
  return {
    name: 'stuck',
    duplicates,
    repeats,
    afterResponse: ({ state, memory }, message) => {
      const recorded = recordTurn({ duplicates, repeats }, memory, message);
      // The hint belongs to this task: a new task starts without it.
      return recorded.hint ? { ...recorded, task: state.taskIndex } : recorded;
    },
    prompt: ({ state, memory }) => (memory?.task === state.taskIndex ? memory.hint : undefined),
  };
}

/** A successful call of a `terminal` tool (terminate) ends the run. */
export function terminalTools(): Policy<undefined> {
  return {
    name: 'terminalTools',
    afterStep: ({ config, state }, calls) => {
      const tools = state.tools ?? config.tools;
      const terminal = calls.find((c) => !c.isError && tools.some((t) => t.name === c.call.name && t.terminal));
      return terminal
        ? { reason: 'terminated', answer: lastAnswer(state.messages) || (terminal.output ?? '') }
        : undefined;
    },
  };
}

/** What `defaultPolicies` is given: the settings a preset or a config.toml chooses. */
export interface DefaultPolicyOptions {
  /** Most steps a task may take (OpenManus's `max_steps`); default 30, OpenManus's tool-calling agent's. */
  readonly maxSteps?: number | undefined;
  /** Most input tokens one request may carry (`max_input_tokens`); without it there is no token budget. */
  readonly maxInputTokens?: number | undefined;
}

/**
 * The rules OpenManus runs with: `stepLimit(30)`, a `tokenBudget` when given a limit,
 * `stuckDetection()` and `terminalTools()`, in that order. A new list each call, to extend:
 * `[...defaultPolicies({ maxSteps: 10 }), myPolicy]`.
 */
export function defaultPolicies(options: DefaultPolicyOptions = {}): Policy[] {
  const { maxSteps = 30, maxInputTokens } = options;
  return [
    stepLimit(maxSteps),
    ...(maxInputTokens === undefined ? [] : [tokenBudget({ maxInputTokens })]),
    stuckDetection(),
    terminalTools(),
  ];
}
