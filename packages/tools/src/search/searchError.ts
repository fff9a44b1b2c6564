import { hasErrorCode, OpenManusError } from '@openmanus/core';
import type { EngineFailure } from './types.js';

/** Why `searchWeb` has no results: every engine failed in every round (`SEARCH_FAILED`), or it was cancelled. */
export class SearchError extends OpenManusError<'SEARCH_FAILED' | 'SEARCH_CANCELLED'> {
  static readonly codes = ['SEARCH_FAILED', 'SEARCH_CANCELLED'] as const;
  override readonly name = 'SearchError';
  readonly cancelled: boolean;
  constructor(
    message: string,
    /** Each engine's failure, in the order they were tried. */
    readonly failures: readonly EngineFailure[],
    cancelled = false,
  ) {
    super(cancelled ? 'SEARCH_CANCELLED' : 'SEARCH_FAILED', message);
    this.cancelled = cancelled;
  }
  static override isInstance(value: unknown): value is SearchError {
    return hasErrorCode(value, SearchError.codes);
  }
}
