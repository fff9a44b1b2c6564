/**
 * The one error family of every @openmanus package. Each error a host can meet is an
 * `OpenManusError` with a stable `code`; the same codes name why a run failed
 * (`RunOutcome.error.code`), so one `switch` handles both.
 */

import type { RunError } from './kernel/runError.js';

/** Marks the family's errors, so `isInstance` holds across two copies of the package (`instanceof` does not). */
const FAMILY = Symbol.for('openmanus.error');

/** The codes of the errors thrown, by package. A released code never changes meaning. */
export type ThrownErrorCode =
  // @openmanus/core
  | 'INVALID_EVENT'
  | 'RUN_IN_PROGRESS'
  | 'STATE_DAMAGED'
  | 'STATE_NEWER'
  | 'RUN_NOT_FOUND'
  | 'RUN_UNFINISHED'
  | 'RUN_NOT_WAITING'
  | 'CHECKPOINT_CONFLICT'
  | 'TRANSCRIPT_INVALID'
  | 'PATH_REFUSED'
  | 'NOT_REGULAR_FILE'
  // @openmanus/tools
  | 'WORKER_TIMEOUT'
  | 'ADDRESS_REFUSED'
  | 'WORKSPACE_FILE'
  | 'CHART_FAILED'
  | 'STRUCTURED_OUTPUT'
  // @openmanus/browser
  | 'STALE_REF'
  | 'BROWSER_ACTION'
  | 'UPLOAD_REFUSED'
  | 'BROWSER_UNAVAILABLE'
  // @openmanus/sandbox
  | 'ENGINE_TIMEOUT'
  // @openmanus/flow
  | 'INVALID_FLOW_EVENT'
  // @openmanus/durable
  | 'ALREADY_DECIDED'
  | 'DECISION_KEY'
  | 'WORKER_ID_IN_USE'
  | 'RUN_CANCELLED'
  | 'FLOW_CANCELLED'
  // @openmanus/server
  | 'REQUEST_REFUSED';

/** What an LLM port's failure kind (`LlmErrorKind`) is as a code: `rate_limit` is `LLM_RATE_LIMIT`. */
export type LlmFailureCode =
  | 'LLM_RATE_LIMIT'
  | 'LLM_OVERLOADED'
  | 'LLM_SERVER'
  | 'LLM_NETWORK'
  | 'LLM_TIMEOUT'
  | 'LLM_ABORTED'
  | 'LLM_BAD_REQUEST'
  | 'LLM_AUTH'
  | 'LLM_CONTEXT_LENGTH'
  | 'LLM_CONFIG'
  | 'LLM_MALFORMED_RESPONSE';

/** The codes of results' errors that are neither thrown nor a run's. */
export type ResultErrorCode =
  // @openmanus/core: a config that cannot be used (`ConfigError`)
  | 'CONFIG_INVALID'
  // @openmanus/tools: a page not read (`WebFetchError`), a search with no results (`SearchError`)
  | 'WEB_FETCH_FAILED'
  | 'SEARCH_FAILED'
  | 'SEARCH_CANCELLED';

/** The codes of why a run ended early or failed (`RunError.code`), besides the model's failures and thrown codes. */
export type RunStopCode =
  /** The LLM port threw instead of returning its failure. */
  | 'LLM_PORT_THREW'
  /** The step limit was reached (`finishReason: 'max_steps'`). */
  | 'MAX_STEPS'
  /** The next request would exceed the token budget (`finishReason: 'token_limit'`). */
  | 'TOKEN_LIMIT'
  /** `toolChoice: 'required'`, and the model answered twice without a tool call. */
  | 'NO_TOOL_CALL'
  /** The run was cancelled; the message is the reason given. */
  | 'CANCELLED'
  /** A policy of the host's stopped the run, saying why (`Stop.say`) without a code of its own. */
  | 'POLICY_STOP'
  /** An effect no performer performs. */
  | 'NO_PERFORMER'
  /** A performer threw instead of answering with an event. */
  | 'PERFORMER_THREW'
  /** The reducer refused an event (a bug in a host's step or performer). */
  | 'REDUCER_REJECTED'
  /** The checkpoint could not be saved. */
  | 'CHECKPOINT_FAILED'
  /** A context provider failed (the request goes without its context). */
  | 'CONTEXT_FAILED'
  /** A flow ran past its `timeoutMs`. */
  | 'FLOW_TIMEOUT'
  /** A flow stopped at a step it could not get done (`finishReason: 'stopped'`). */
  | 'STEP_BLOCKED'
  /** Something else threw that is not of the family. */
  | 'INTERNAL'
  /** A state saved before errors had codes: its error was only a message. */
  | 'LEGACY';

/** Every code of the family: of a thrown `OpenManusError`, of a run's `RunError`, or of a result's error. */
export type OpenManusErrorCode = ThrownErrorCode | LlmFailureCode | RunStopCode | ResultErrorCode;

/** The base of every error an @openmanus package throws at a host. */
export class OpenManusError<C extends OpenManusErrorCode = OpenManusErrorCode> extends Error {
  override readonly name: string = 'OpenManusError';
  readonly code: C;

  constructor(code: C, message: string, options?: { readonly cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
  }

  /** Whether `value` is an error of the family, made by this copy of the package or another. */
  static isInstance(value: unknown): value is OpenManusError {
    return typeof value === 'object' && value !== null && (value as { [FAMILY]?: unknown })[FAMILY] === true;
  }
}

// On the prototype: an own property would show in every error's keys and JSON.
Object.defineProperty(OpenManusError.prototype, FAMILY, { value: true });

/** Whether `value` is of the family and has one of `codes`: a subclass's `isInstance`. */
export const hasErrorCode = <E extends OpenManusError>(
  value: unknown,
  codes: readonly OpenManusErrorCode[],
): value is E => OpenManusError.isInstance(value) && codes.includes(value.code);

/**
 * What was thrown, as a run's error (`RunError`): an error of the family keeps its code, anything
 * else gets `code`; the message follows `prefix` (what was being done).
 */
export function runErrorOf(thrown: unknown, code: OpenManusErrorCode, prefix = ''): RunError {
  const message = `${prefix}${thrown instanceof Error ? thrown.message : String(thrown)}`;
  return { code: OpenManusError.isInstance(thrown) ? thrown.code : code, message };
}
