// How a failed model request reads, whatever the provider: the pieces every port's error mapping shares.
import { messageOf } from '../messageOf.js';
import type { LlmError } from './llm.js';
import { ReplyCutShortError } from './replyStream.js';

export const CONTEXT_LENGTH = /context length|maximum context|too many tokens/i;
export const OVERLOADED = /overloaded/i;

/** The wait a failed response asks for: `retry-after-ms`, or `retry-after` in seconds or as a date. */
export function retryAfterMsOf(headers: { get(name: string): string | null } | undefined): number | undefined {
  const ms = Number(headers?.get('retry-after-ms') ?? Number.NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const after = headers?.get('retry-after');
  if (!after) return undefined;
  const seconds = Number(after);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

const NETWORK_CODE = /^(?:UND_ERR_|ECONNRESET$|EPIPE$|ECONNABORTED$|ETIMEDOUT$|ENETUNREACH$|EHOSTUNREACH$|ENOTCONN$)/;

/** The error and its causes, outermost first (a few levels, in case of a cycle). */
function chain(error: unknown): Error[] {
  const errors: Error[] = [];
  for (let current = error; current instanceof Error && errors.length < 5; current = current.cause)
    errors.push(current);
  return errors;
}

/** Something in the cause chain says the connection broke (undici's `terminated`, a reset socket). */
export const brokeOff = (error: unknown): boolean =>
  chain(error).some((e) => {
    const code = (e as { code?: unknown }).code;
    return (
      e.message === 'terminated' || e.name === 'SocketError' || (typeof code === 'string' && NETWORK_CODE.test(code))
    );
  });

/** `terminated (other side closed)`: the distinct messages of the chain. */
export function causes(error: unknown): string {
  const messages = [...new Set(chain(error).map((e) => e.message))].filter(Boolean);
  return messages.length > 1 ? `${messages[0]} (${messages.slice(1).join(': ')})` : (messages[0] ?? String(error));
}

/** A failure's message, with the status and the wait it came with where known. */
export const failureFields = (
  message: string,
  status: number | undefined,
  retryAfterMs: number | undefined,
): Pick<LlmError, 'message' | 'status' | 'retryAfterMs'> => ({
  message,
  ...(status !== undefined ? { status } : {}),
  ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
});

/** Whether a failed attempt may succeed when tried again: the failures of the moment. */
export function retryable(error: LlmError): boolean {
  return (
    error.kind === 'rate_limit' || error.kind === 'overloaded' || error.kind === 'server' || error.kind === 'network'
  );
}

/**
 * What a failure that is none of the provider's errors says, once the reply had begun: its body or
 * stream broke off (or ended before the reply did), the request was aborted, or the reply was not
 * what the provider sends.
 */
export function replyFailure(error: unknown): LlmError {
  if (error instanceof ReplyCutShortError)
    return { kind: 'network', message: `the connection broke during the reply: ${error.message}` };
  if (brokeOff(error)) return { kind: 'network', message: `the connection broke during the reply: ${causes(error)}` };
  if (error instanceof Error && error.name === 'AbortError') return { kind: 'aborted', message: error.message };
  return { kind: 'malformed_response', message: messageOf(error) };
}
