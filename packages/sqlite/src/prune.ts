/** Which runs `prune` deletes: all the criteria given hold for each run deleted. */
export interface PruneOptions {
  /** Runs last saved before this date, or more than this many milliseconds ago. */
  readonly olderThan?: Date | number;
  /** Keeps the newest `keep` runs of those it would otherwise delete. */
  readonly keep?: number;
  /** Only runs that have ended: their state's `status` is `finished` or `failed`. */
  readonly finishedOnly?: boolean;
}

/** The statuses of a run that has ended (an agent's and a flow's alike). */
export const FINAL_STATUSES = ['finished', 'failed'] as const;

export interface PruneQuery {
  /** Runs saved at or after this time (ms since the epoch) are kept. */
  readonly before: number;
  readonly keep: number;
  readonly finishedOnly: boolean;
}

/** The options checked and made absolute at `now`; no criterion at all would delete every run, so it is refused. */
export function pruneQuery(options: PruneOptions, now: number): PruneQuery {
  const { olderThan, keep, finishedOnly = false } = options;
  if (olderThan === undefined && keep === undefined)
    throw new TypeError('prune needs olderThan or keep: without either it would delete every run');
  if (keep !== undefined && !(Number.isSafeInteger(keep) && keep >= 0))
    throw new TypeError(`prune: keep must be a whole number of runs, not ${keep}`);
  const before = olderThan instanceof Date ? olderThan.getTime() : olderThan === undefined ? Infinity : now - olderThan;
  if (Number.isNaN(before) || (typeof olderThan === 'number' && !(olderThan >= 0)))
    throw new TypeError(`prune: olderThan must be a date or a number of milliseconds, not ${String(olderThan)}`);
  return { before, keep: keep ?? 0, finishedOnly };
}
