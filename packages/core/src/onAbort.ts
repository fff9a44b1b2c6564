const listeners = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Calls `listener` once when `signal` aborts; the returned function lets go of it. A run's
 * signal is listened to by each of its calls in turn: one event listener per signal serves
 * them all, since adding and removing EventTarget listeners costs more than a Set entry.
 */
export function onAbort(signal: AbortSignal, listener: () => void): () => void {
  let waiting = listeners.get(signal);
  if (!waiting) {
    const added = new Set<() => void>();
    waiting = added;
    listeners.set(signal, added);
    signal.addEventListener(
      'abort',
      () => {
        for (const waiter of added) waiter();
        added.clear();
      },
      { once: true },
    );
  }
  const set = waiting;
  set.add(listener);
  return () => {
    set.delete(listener);
  };
}
