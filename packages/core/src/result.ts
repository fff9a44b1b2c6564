/**
 * The one result shape at every public edge: a plain, JSON-friendly union. Check `ok`, then
 * read `value` or `error`; nothing to unwrap, nothing that throws.
 */
export type Result<T, E> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: E };

export const ok = <T>(value: T): { readonly ok: true; readonly value: T } => ({ ok: true, value });
export const err = <E>(error: E): { readonly ok: false; readonly error: E } => ({ ok: false, error });
