/**
 * The one result shape at every public edge: neverthrow's `Result` (and `ResultAsync` for a promise
 * of one). Core re-exports it, so users need no neverthrow of their own and every @openmanus
 * package shares one copy.
 */
import { Err, err, Ok, ok, type Result } from 'neverthrow';

export { Err, err, errAsync, Ok, ok, okAsync, Result, ResultAsync } from 'neverthrow';

type ResultLike = { isOk(): boolean; isErr(): boolean; value?: unknown; error?: unknown };

/** A result of neverthrow, ours or another copy's (where `instanceof Ok` does not hold). */
const isNeverthrowResult = (value: object): value is ResultLike =>
  typeof (value as ResultLike).isOk === 'function' && typeof (value as ResultLike).isErr === 'function';

/** The plain `{ ok, value | error }` object that was the result shape before neverthrow (0.1). */
const isLegacyResult = (value: object): value is { ok: boolean; value?: unknown; error?: unknown } =>
  typeof (value as { ok?: unknown }).ok === 'boolean' && ('value' in value || 'error' in value);

/**
 * What a port or tool of the host's returned, as our `Result`: a neverthrow result of any copy, or
 * the legacy plain object (still taken, so code written for 0.1 keeps working); `undefined` when
 * `returned` is neither.
 */
export function resultOf(returned: unknown): Result<unknown, unknown> | undefined {
  if (returned instanceof Ok || returned instanceof Err) return returned;
  if (typeof returned !== 'object' || returned === null) return undefined;
  if (isNeverthrowResult(returned)) return returned.isOk() ? ok(returned.value) : err(returned.error);
  if (isLegacyResult(returned)) return returned.ok ? ok(returned.value) : err(returned.error);
  return undefined;
}
