import type { LlmFailureCode } from '../errors.js';
import type { LlmRequest } from '../kernel/effects.js';
import type { LlmUsage } from '../kernel/events.js';
import type { ReasoningPart, ToolCall } from '../kernel/messages.js';
import type { RunError } from '../kernel/runError.js';
import { type Result, ResultAsync, resultOf } from '../result.js';

/** Why the model stopped: done, to call tools, at its output limit, filtered, or for another reason. */
export type LlmFinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter' | 'other';

export interface LlmResponse {
  readonly content: string;
  readonly toolCalls: readonly ToolCall[];
  readonly usage?: LlmUsage;
  /** Why the reply ended, where the provider says. */
  readonly finishReason?: LlmFinishReason;
  /** The model's reasoning, where the provider returns it to be sent back (kept with the reply in memory). */
  readonly reasoning?: readonly ReasoningPart[];
}

export type LlmErrorKind =
  | 'rate_limit'
  | 'overloaded'
  | 'server'
  | 'network'
  | 'timeout'
  | 'aborted'
  | 'bad_request'
  | 'auth'
  | 'context_length'
  | 'config'
  | 'malformed_response';

export interface LlmError {
  readonly kind: LlmErrorKind;
  readonly message: string;
  readonly status?: number;
  /** How long the provider asked to wait before trying again (a rate limit's or an overload's Retry-After), in ms. */
  readonly retryAfterMs?: number;
}

/** A piece of a tool call as the model streams it: who it is when first seen, then its arguments piece by piece. */
export interface ToolCallDelta {
  /** Which call of the reply (0, 1, …): pieces with the same index belong together. */
  readonly index: number;
  readonly id?: string;
  readonly name?: string;
  /** The next piece of the arguments (JSON text; the pieces joined are the call's arguments). */
  readonly arguments?: string;
}

/** A piece of a reply as it streams in: text, a tool call's piece, or a restart of a retried reply. */
export interface LlmDelta {
  /** The next piece of the reply's text (in the prompt tool mode, the tool-call markup too). */
  readonly text?: string;
  readonly toolCall?: ToolCallDelta;
  /** The reply broke off and is requested again: drop what this call's earlier deltas said. */
  readonly restart?: true;
}

export interface LlmCallOptions {
  readonly signal?: AbortSignal;
  /**
   * Gets the reply's pieces as they arrive, when the port streams (the response is the same
   * either way). A throwing callback ends the request, and `complete` throws its error.
   */
  readonly onDelta?: (delta: LlmDelta) => void;
}

/** The port the interpreter calls models through. Retries happen inside; the result is final. */
export interface LlmPort {
  readonly model: string;
  complete(request: LlmRequest, options?: LlmCallOptions): ResultAsync<LlmResponse, LlmError>;
}

/** A port's `complete` written as an async function, as the port's method (which returns a `ResultAsync`). */
export const portComplete =
  (
    complete: (request: LlmRequest, options?: LlmCallOptions) => Promise<Result<LlmResponse, LlmError>>,
  ): LlmPort['complete'] =>
  (request, options) =>
    new ResultAsync(complete(request, options));

/**
 * What a port answered, as a `Result`: neverthrow's of any copy, or the plain `{ ok, value | error }`
 * object of 0.1 (still taken). Anything else is the port's bug, thrown (the run fails with `LLM_PORT_THREW`).
 */
export function llmAnswerOf(answer: unknown): Result<LlmResponse, LlmError> {
  const result = resultOf(answer);
  if (!result) {
    const what = answer === null ? 'null' : typeof answer;
    throw new TypeError(`the port answered with ${what}, not a Result: return ok(reply) or err(failure)`);
  }
  return result as Result<LlmResponse, LlmError>;
}

export const describeLlmError = (error: LlmError): string =>
  `${error.kind}${error.status ? ` (HTTP ${error.status})` : ''}: ${error.message}`;

/** Each failure kind's code in the error family. */
const LLM_FAILURE_CODES: Readonly<Record<LlmErrorKind, LlmFailureCode>> = {
  rate_limit: 'LLM_RATE_LIMIT',
  overloaded: 'LLM_OVERLOADED',
  server: 'LLM_SERVER',
  network: 'LLM_NETWORK',
  timeout: 'LLM_TIMEOUT',
  aborted: 'LLM_ABORTED',
  bad_request: 'LLM_BAD_REQUEST',
  auth: 'LLM_AUTH',
  context_length: 'LLM_CONTEXT_LENGTH',
  config: 'LLM_CONFIG',
  malformed_response: 'LLM_MALFORMED_RESPONSE',
};

/** A port's failure as a run's error: its kind as a code, its status and Retry-After kept, described as before. */
export function runErrorOfLlm(error: LlmError): RunError {
  return {
    code: LLM_FAILURE_CODES[error.kind] ?? 'LLM_MALFORMED_RESPONSE',
    message: describeLlmError(error),
    ...(error.status !== undefined ? { status: error.status } : {}),
    ...(error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}),
  };
}
