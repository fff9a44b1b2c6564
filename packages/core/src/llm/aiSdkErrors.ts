import { messageOf } from '../messageOf.js';
import {
  brokeOff,
  CONTEXT_LENGTH,
  causes,
  failureFields,
  OVERLOADED,
  replyFailure,
  retryAfterMsOf,
} from './failures.js';
import type { LlmError } from './llm.js';

// The AI SDK marks its errors with symbols (`Symbol.for`), so that they are recognised across
// copies and versions of its packages: read here the same way, without loading the SDK.
const marked = (error: unknown, name: string): boolean => {
  if (typeof error !== 'object' || error === null) return false;
  return (error as Record<symbol, unknown>)[Symbol.for(name)] === true;
};
const isAiSdkError = (error: unknown, name: string) => marked(error, `vercel.ai.error.${name}`);

/** What an API call error and a provider's stream error say (the fields both have, as the SDK sets them). */
interface ProviderFailure {
  readonly message?: unknown;
  readonly statusCode?: unknown;
  readonly responseHeaders?: unknown;
  readonly isRetryable?: unknown;
  /** A stream error's type as the provider named it (Anthropic's `overloaded_error`, Gemini's `UNAVAILABLE`). */
  readonly type?: unknown;
  readonly code?: unknown;
  /** An API call error's body as the provider's error schema read it. */
  readonly data?: unknown;
}

/**
 * The names the provider gave its error, wherever it put them: a stream error's type and code,
 * the body's `error.type` (Anthropic) or `error.status` (Google), AWS's `x-amzn-ErrorType` header.
 */
function namesOf(failure: ProviderFailure, headers: ReturnType<typeof headersOf>): string {
  const body = typeof failure.data === 'object' && failure.data !== null ? (failure.data as { error?: unknown }) : {};
  const error = typeof body.error === 'object' && body.error !== null ? (body.error as Record<string, unknown>) : {};
  return [failure.type, failure.code, error.type, error.status, headers?.get('x-amzn-errortype')]
    .filter((name) => typeof name === 'string' || typeof name === 'number')
    .join(' ');
}

/**
 * How an AI SDK model's failure reads as the port's error: an API call's status (429, 401/403,
 * 5xx, an overlong context), a stream's error part, a missing API key or setting, a broken
 * connection, or a reply the provider could not parse.
 */
export function toLlmError(error: unknown): LlmError {
  if (isAiSdkError(error, 'AI_LoadAPIKeyError') || isAiSdkError(error, 'AI_LoadSettingError')) {
    return { kind: 'config', message: messageOf(error) };
  }
  if (isAiSdkError(error, 'AI_APICallError') || marked(error, 'vercel.ai.providerStreamError')) {
    return fromFailure(error as ProviderFailure, error);
  }
  if (
    isAiSdkError(error, 'AI_JSONParseError') ||
    isAiSdkError(error, 'AI_TypeValidationError') ||
    isAiSdkError(error, 'AI_InvalidResponseDataError') ||
    isAiSdkError(error, 'AI_EmptyResponseBodyError')
  ) {
    return { kind: 'malformed_response', message: messageOf(error) };
  }
  // A stream's error part may carry the provider's error as sent (an object with a message).
  if (typeof error === 'object' && error !== null && !(error instanceof Error) && 'message' in error) {
    return fromFailure(error as ProviderFailure, error);
  }
  return replyFailure(error);
}

function fromFailure(failure: ProviderFailure, error: unknown): LlmError {
  const message = typeof failure.message === 'string' ? failure.message : messageOf(error);
  const status = typeof failure.statusCode === 'number' ? failure.statusCode : undefined;
  const headers = headersOf(failure.responseHeaders);
  const base = failureFields(message, status, retryAfterMsOf(headers));
  // A 200 whose body could not be read: cut off on the way, or not what the provider sends.
  if (status !== undefined && status < 300) {
    return brokeOff(error)
      ? { kind: 'network', message: `the connection broke during the reply: ${causes(error)}` }
      : { kind: 'malformed_response', message: `${message}${causeOf(error)}` };
  }
  const named = namesOf(failure, headers);
  if (status === 429 || /rate_limit|RESOURCE_EXHAUSTED|Throttling/i.test(named)) return { kind: 'rate_limit', ...base };
  if (status === 401 || status === 403) return { kind: 'auth', ...base };
  if (
    status === 529 ||
    OVERLOADED.test(named) ||
    (status === 503 && /UNAVAILABLE|ServiceUnavailable/i.test(named)) ||
    ((status === 503 || status === undefined) && OVERLOADED.test(message))
  ) {
    return { kind: 'overloaded', ...base };
  }
  if (
    CONTEXT_LENGTH.test(message) ||
    /context_length|prompt is too long|input token count/i.test(`${named} ${message}`)
  ) {
    return { kind: 'context_length', ...base };
  }
  if (status !== undefined && status >= 500) return { kind: 'server', ...base };
  // A 4xx the provider says may pass (408, 409, Bedrock's 424 model stream error): a failure of the moment.
  if (status !== undefined) return { kind: failure.isRetryable === true ? 'server' : 'bad_request', ...base };
  // No status: the request never got an answer (the SDK's "Cannot connect to API"), or a stream
  // error the provider says is worth retrying.
  if (brokeOff(error) || failure.isRetryable === true)
    return { kind: 'network', message: `${message}${causeOf(error)}` };
  return { kind: 'server', ...base };
}

const causeOf = (error: unknown): string => {
  const cause = error instanceof Error ? error.cause : undefined;
  return cause instanceof Error && cause.message ? ` (${causes(cause)})` : '';
};

/** The SDK gives response headers as a plain record (lower-case names). */
function headersOf(headers: unknown): { get(name: string): string | null } | undefined {
  if (typeof headers !== 'object' || headers === null) return undefined;
  const record = headers as Record<string, unknown>;
  return {
    get(name) {
      const value = record[name] ?? record[name.toLowerCase()];
      return typeof value === 'string' ? value : null;
    },
  };
}
