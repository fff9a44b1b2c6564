/**
 * Admission of new runs: at most `PER_TURN` start in one turn of the event loop, the rest in the
 * turns after, in order. A thousand runs started at once then do their first synchronous work in
 * slices, so timers and I/O of the runs already going are not held up by one long burst. A run
 * started alone is admitted at once, without waiting for anything.
 */
const PER_TURN = 64;
let admitted = 0;
let scheduled = false;
const waiting: (() => void)[] = [];

function nextTurn(): void {
  scheduled = false;
  admitted = 0;
  while (admitted < PER_TURN && waiting.length > 0) {
    admitted++;
    waiting.shift()?.();
  }
  if (admitted > 0) schedule();
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(nextTurn);
}

/** Resolves when the run may start: at once (undefined) while this turn has room. */
export function admitRun(): Promise<void> | undefined {
  schedule();
  if (admitted < PER_TURN && waiting.length === 0) {
    admitted++;
    return undefined;
  }
  return new Promise((resolve) => waiting.push(resolve));
}
