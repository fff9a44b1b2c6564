// The openai and @anthropic-ai/sdk SDKs are both made by Stainless: their errors are the same classes.
import { retryable } from './failures.js';
import type { LlmError } from './llm.js';
import { ReplyError } from './replyError.js';

type ErrorClass = abstract new (...args: never[]) => Error;

/** The error classes both SDKs export, each its own. */
export interface SdkErrors {
  readonly APIUserAbortError: ErrorClass;
  readonly APIConnectionTimeoutError: ErrorClass;
  readonly APIConnectionError: ErrorClass;
}

/** A request the SDK got no answer to: aborted, timed out before the headers, or no connection. */
export function unanswered(sdk: SdkErrors, error: unknown): LlmError | undefined {
  if (error instanceof sdk.APIUserAbortError) return { kind: 'aborted', message: 'the request was aborted' };
  if (error instanceof sdk.APIConnectionTimeoutError) return { kind: 'timeout', message: error.message };
  if (error instanceof sdk.APIConnectionError)
    return {
      kind: 'network',
      message: error.cause instanceof Error ? `${error.message} (${error.cause.message})` : error.message,
    };
  return undefined;
}

/**
 * Whether the attempt failed mid-way, to be tried again here: the SDK retried what failed before
 * the headers; after them, a cut connection or an error the server sent about itself in place of
 * the reply (overloaded, rate-limited, its own fault) is retried here.
 */
export function failedMidway(sdk: SdkErrors, thrown: unknown, error: LlmError): boolean {
  if (thrown instanceof ReplyError) return retryable(error);
  return error.kind === 'network' && !(thrown instanceof sdk.APIConnectionError);
}
