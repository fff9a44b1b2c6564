import { messageOf } from '../messageOf.js';
import { brokeOff, CONTEXT_LENGTH, causes, failureFields, retryAfterMsOf } from './failures.js';
import type { LlmError, LlmErrorKind } from './llm.js';
import { ReplyCutShortError } from './replyStream.js';

/** What the AWS SDK attaches to a service's error: the HTTP status and the response. */
interface AwsErrorFields {
  readonly $metadata?: { readonly httpStatusCode?: number };
  readonly $response?: { readonly headers?: Readonly<Record<string, string | undefined>> };
  readonly code?: unknown;
}

/** Bedrock's exceptions (and the signing service's), by name: what each means for the caller. */
const KIND_OF_EXCEPTION: Readonly<Record<string, LlmErrorKind>> = {
  ThrottlingException: 'rate_limit',
  ServiceQuotaExceededException: 'rate_limit',
  ServiceUnavailableException: 'overloaded',
  ModelNotReadyException: 'overloaded',
  AccessDeniedException: 'auth',
  UnrecognizedClientException: 'auth',
  ExpiredTokenException: 'auth',
  InvalidSignatureException: 'auth',
  IncompleteSignatureException: 'auth',
  MissingAuthenticationTokenException: 'auth',
  ModelTimeoutException: 'timeout',
  InternalServerException: 'server',
  ModelErrorException: 'server',
  ModelStreamErrorException: 'server',
  ResourceNotFoundException: 'bad_request',
  ConflictException: 'bad_request',
};

// Bedrock's "Input is too long for requested model", Claude's "prompt is too long", Nova's "Input Tokens Exceeded".
const TOO_LONG = /too long|input tokens exceed/i;

// A connection that failed or broke: refused, reset, an HTTP/2 stream or session error, an event
// stream cut inside a message.
const CONNECTION_CODE = /^(?:ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ERR_HTTP2_)/;
const TRUNCATED = /^Truncated event message/;

const REGION_MISSING = /region is missing/i;
const CREDENTIALS_HINT =
  'give `credentials`, or set them where the AWS default chain looks (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, SSO, an instance role)';
const REGION_HINT =
  'give `region`, an endpoint that names one (bedrock-runtime.us-west-2.amazonaws.com), or set AWS_REGION';

const fieldsOf = (error: unknown): AwsErrorFields =>
  typeof error === 'object' && error !== null ? (error as AwsErrorFields) : {};

/** The error's name, where it is an Error (the SDK names its exceptions after Bedrock's). */
const nameOf = (error: unknown): string => (error instanceof Error ? error.name : '');

/** A 200 whose body could not be read whole: it broke off, or was not JSON. */
export function unreadableReply(error: unknown): boolean {
  return fieldsOf(error).$metadata?.httpStatusCode === 200;
}

function brokeConnection(error: unknown): boolean {
  if (brokeOff(error) || error instanceof ReplyCutShortError) return true;
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const { code } = fieldsOf(e);
    if (e.name === 'NghttpError' || TRUNCATED.test(e.message)) return true;
    if (typeof code === 'string' && CONNECTION_CODE.test(code)) return true;
  }
  return false;
}

/** What a failed Converse call says, as the port's error. */
export function toLlmError(error: unknown): LlmError {
  const name = nameOf(error);
  if (name === 'AbortError') return { kind: 'aborted', message: 'the request was aborted' };
  const fields = fieldsOf(error);
  const status = fields.$metadata?.httpStatusCode;
  const message = messageOf(error);
  const headers = fields.$response?.headers;
  const retryAfterMs = retryAfterMsOf(headers && { get: (header) => headers[header] ?? null });
  const base = failureFields(
    name && !message.startsWith(name) ? `${name}: ${message}` : message,
    status === 200 ? undefined : status,
    retryAfterMs,
  );
  const tooLong = TOO_LONG.test(message) || CONTEXT_LENGTH.test(message);
  if (name === 'ValidationException') return { kind: tooLong ? 'context_length' : 'bad_request', ...base };
  const named = KIND_OF_EXCEPTION[name];
  if (named) return { kind: named, ...base };
  // Raised before any request: a setup problem, said with what would set it up.
  if (name === 'CredentialsProviderError') {
    return { kind: 'config', message: `no AWS credentials (${message}): ${CREDENTIALS_HINT}` };
  }
  if (REGION_MISSING.test(message)) return { kind: 'config', message: `no AWS region: ${REGION_HINT}` };
  if (status === 200) {
    return brokeConnection(error)
      ? { kind: 'network', message: `the connection broke during the reply: ${causes(error)}` }
      : { kind: 'malformed_response', message: `the reply could not be read: ${message}` };
  }
  if (status === 429) return { kind: 'rate_limit', ...base };
  if (status === 401 || status === 403) return { kind: 'auth', ...base };
  if (status !== undefined && status >= 500) return { kind: 'server', ...base };
  if (status !== undefined && status >= 400) return { kind: tooLong ? 'context_length' : 'bad_request', ...base };
  if (brokeConnection(error)) {
    const during = error instanceof ReplyCutShortError || TRUNCATED.test(message) ? ' during the reply' : '';
    return { kind: 'network', message: `the connection broke${during}: ${causes(error)}` };
  }
  return { kind: 'malformed_response', message };
}
