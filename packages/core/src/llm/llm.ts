import type { LlmRequest } from '../kernel/effects.js';
import type { LlmUsage } from '../kernel/events.js';
import type { ToolCall } from '../kernel/messages.js';
import type { Result } from '../result.js';

export interface LlmResponse {
  readonly content: string;
  readonly toolCalls: readonly ToolCall[];
  readonly usage?: LlmUsage;
}

export type LlmErrorKind =
  | 'rate_limit'
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
}

export interface LlmCallOptions {
  readonly signal?: AbortSignal;
}

/** The port the interpreter calls models through. Retries happen inside; the result is final. */
export interface LlmPort {
  readonly model: string;
  complete(request: LlmRequest, options?: LlmCallOptions): Promise<Result<LlmResponse, LlmError>>;
}

export const describeLlmError = (error: LlmError): string =>
  `${error.kind}${error.status ? ` (HTTP ${error.status})` : ''}: ${error.message}`;
