const listeners = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Calls `listener` once when `signal` aborts (at once if it has); the returned function lets go
 * of it. A run's signal is listened to by each of its calls in turn: one event listener per
 * signal serves them all, since adding and removing EventTarget listeners costs more than a Set entry.
 */
export function onAbort(signal: AbortSignal, listener: () => void): () => void {
  if (signal.aborted) {
    listener();
    return () => {};
  }
  const waiting = listeners.get(signal) ?? listen(signal);
  waiting.add(listener);
  return () => {
    waiting.delete(listener);
  };
}

function listen(signal: AbortSignal): Set<() => void> {
  const waiting = new Set<() => void>();
  listeners.set(signal, waiting);
  signal.addEventListener(
    'abort',
    () => {
      for (const listener of waiting) listener();
      waiting.clear();
    },
    { once: true },
  );
  return waiting;
}
