import type { OpenManusErrorCode } from '../errors.js';

/**
 * Why a run failed or stopped early, as data: saved with the state, sent on the wire, read by
 * hosts. `code` is of the error family's scheme (`LLM_RATE_LIMIT`, `MAX_STEPS`, …), so a host
 * tells a rate limit from an auth failure without reading the message.
 */
export interface RunError {
  readonly code: OpenManusErrorCode;
  readonly message: string;
  /** The provider's HTTP status, for a model's failure where it answered with one. */
  readonly status?: number;
  /** How long the provider asked to wait before trying again (a rate limit's Retry-After), in ms. */
  readonly retryAfterMs?: number;
}
