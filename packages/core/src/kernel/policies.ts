import type { AgentConfig } from './agent.js';
import type { LlmRequest, Observation } from './effects.js';
import { type AssistantMessage, lastAnswer, type ToolCall } from './messages.js';
import type { RunError } from './runError.js';
import type { AgentState, FinishReason, PendingCall } from './state.js';
import { recordTurn, type StuckMemory } from './stuck.js';
import { requestTokens, tokenizerReady } from './tokens.js';
import type { ToolSpec } from './tool.js';

/** What a policy sees: the agent, the run, and what the policy itself remembered last time. */
export interface PolicyContext {
  readonly config: AgentConfig;
  readonly state: AgentState;
  /** `state.policies[name]`: whatever this policy's `afterResponse` returned last. */
  readonly memory: unknown;
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
 * A rule around the think → act → observe loop, as pure hooks the reducer calls at fixed
 * points. The default `step` is the loop plus `defaultPolicies`; an agent may replace, drop
 * or add policies (`createAgent({ policies })`). Every hook is optional and must be pure.
 */
export interface Policy {
  readonly name: string;
  /** Before a step starts: stop the run instead (a step limit, a budget in dollars). */
  beforeStep?(context: PolicyContext): Stop | undefined;
  /** A line for the next request's prompt (never stored in memory). */
  prompt?(context: PolicyContext): string | undefined;
  /** The request is built: send it (maybe changed, with notes for the host), or stop instead. */
  beforeRequest?(
    context: PolicyContext,
    request: LlmRequest,
  ): Stop | { readonly request: LlmRequest; readonly notes?: readonly Observation[] } | undefined;
  /** The model replied: what the policy remembers from now on (its `memory`). */
  afterResponse?(context: PolicyContext, message: AssistantMessage): unknown;
  /** A call the tool does not gate: should it wait for a person's approval first? (`true` asks.) */
  needsApproval?(context: PolicyContext, call: ToolCall, args: unknown, spec: ToolSpec): boolean | undefined;
  /** A call is about to run: a message refuses it (the model sees the message as the call's result). */
  admitCall?(context: PolicyContext, call: ToolCall, spec: ToolSpec): string | undefined;
  /** Every call of the step has answered: stop the run here? */
  afterStep?(context: PolicyContext, calls: readonly PendingCall[]): Stop | undefined;
}

export const isStop = (value: object): value is Stop => 'reason' in value;

/** OpenManus's `max_steps`: the run finishes, resumable with a fresh step budget by a new message. */
export const stepLimit: Policy = {
  name: 'stepLimit',
  beforeStep: ({ config, state }) =>
    state.step >= config.maxSteps
      ? { reason: 'max_steps', error: { code: 'MAX_STEPS', message: `reached the step limit (${config.maxSteps})` } }
      : undefined,
};

/**
 * A request over `config.maxInputTokens` is never sent: the run finishes as `token_limit`
 * with the reason. Counts come from `count` when given, else the configured tokenizer once
 * loaded, else an estimate with a visible note — never an exception.
 */
export function tokenBudget(count?: (request: LlmRequest) => number): Policy {
  return {
    name: 'tokenBudget',
    beforeRequest: ({ config, state }, request) => {
      const limit = config.maxInputTokens;
      if (limit === undefined) return undefined;
      const exact = count !== undefined || tokenizerReady(config.tokenizer);
      const needed = count ? count(request) : requestTokens(request, exact ? config.tokenizer : 'estimate');
      const notes: Observation[] = exact ? [] : [{ kind: 'tokensEstimated', tokenizer: config.tokenizer }];
      if (needed <= limit) return { request, notes };
      const say =
        `Stopped before step ${state.step}: the request needs ${needed} input tokens${estimateNote(config, exact, count)}, ` +
        `more than the limit of ${limit}. It was not sent.`;
      return { reason: 'token_limit', say, error: { code: 'TOKEN_LIMIT', message: say } };
    },
  };
}

/** How a count was made, when it was not exact: a stop decided on an estimate must say so. */
function estimateNote(config: AgentConfig, exact: boolean, count?: (request: LlmRequest) => number): string {
  if (count) return '';
  if (!exact) return ` (estimated at 4 characters a token: the ${config.tokenizer} tokenizer was not loaded)`;
  return config.tokenizer === 'estimate' ? ' (estimated at 4 characters a token: the agent counts by estimate)' : '';
}

/** Repeated turns or calls add a one-off "change strategy" hint to the next request. */
export const stuckDetection: Policy = {
  name: 'stuck',
  afterResponse: ({ config, state, memory }, message) => {
    const recorded = recordTurn(config, memory as StuckMemory | undefined, message);
    // The hint belongs to this task: a new task starts without it.
    return recorded.hint ? { ...recorded, task: state.taskIndex } : recorded;
  },
  prompt: ({ state, memory }) => {
    const stuck = memory as (StuckMemory & { readonly task?: number }) | undefined;
    return stuck?.task === state.taskIndex ? stuck.hint : undefined;
  },
};

/** A successful call of a `terminal` tool (terminate) ends the run. */
export const terminalTools: Policy = {
  name: 'terminalTools',
  afterStep: ({ config, state }, calls) => {
    const tools = state.tools ?? config.tools;
    const terminal = calls.find((c) => !c.isError && tools.some((t) => t.name === c.call.name && t.terminal));
    return terminal
      ? { reason: 'terminated', answer: lastAnswer(state.messages) || (terminal.output ?? '') }
      : undefined;
  },
};

/** The rules OpenManus runs with: step limit, token budget, stuck detection, terminal tools. */
export const defaultPolicies: readonly Policy[] = [stepLimit, tokenBudget(), stuckDetection, terminalTools];
