/** Delivers one item; a promise back means the buffer is full and the producer should wait for it. */
export type ItemSink<T> = (item: T) => Promise<void> | undefined;

/**
 * A run's items as an async iterator: `start` runs the work with a sink and a signal. Leaving
 * the loop early aborts the signal (cancelling the work); a slow consumer slows the work, as
 * the buffer is bounded; a rejection of `start` is thrown from the iterator after the items.
 * Agent runs and flows stream through this one helper.
 */
export function itemStream<T>(
  start: (sink: ItemSink<T>, signal: AbortSignal) => Promise<unknown>,
  outer?: AbortSignal,
): AsyncIterableIterator<T> {
  const HIGH_WATER = 64;
  const stop = new AbortController();
  const signal = outer ? AbortSignal.any([outer, stop.signal]) : stop.signal;
  const buffered: T[] = [];
  let wake: (() => void) | undefined;
  let drained: (() => void) | undefined;
  let done = false;
  let failure: unknown;
  const sink: ItemSink<T> = (item) => {
    buffered.push(item);
    wake?.();
    if (buffered.length < HIGH_WATER || stop.signal.aborted) return undefined;
    return new Promise<void>((resolve) => {
      drained = resolve;
    });
  };
  const release = () => {
    drained?.();
    drained = undefined;
  };
  const finished = (async () => {
    await start(sink, signal);
  })()
    .catch((error: unknown) => {
      failure = error;
    })
    .finally(() => {
      done = true;
      wake?.();
    });
  const iterator: AsyncIterableIterator<T> = {
    [Symbol.asyncIterator]: () => iterator,
    async next(): Promise<IteratorResult<T>> {
      while (buffered.length === 0 && !done) await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
      const item = buffered.shift();
      if (buffered.length < HIGH_WATER / 2) release();
      if (item !== undefined) return { value: item, done: false };
      if (failure) throw failure;
      return { value: undefined, done: true };
    },
    async return(): Promise<IteratorResult<T>> {
      stop.abort(new Error('the stream was closed before the run ended'));
      release();
      await finished;
      buffered.length = 0;
      return { value: undefined, done: true };
    },
  };
  return iterator;
}
