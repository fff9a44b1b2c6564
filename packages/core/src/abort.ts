export interface AbortLink {
  readonly signal: AbortSignal;
  /** The link's own time limit fired (not the parent). */
  timedOut(): boolean;
  /** Detaches from the parent and stops the timer; call when the work is over. */
  dispose(): void;
}

/**
 * A child signal that aborts with its parent or after `timeoutMs`, and lets go of the parent
 * afterwards (AbortSignal.any and the SDK keep listeners on a long-lived run signal).
 */
export function linkAbort(parent: AbortSignal | undefined, timeoutMs?: number): AbortLink {
  const controller = new AbortController();
  let expired = false;
  const onAbort = () => controller.abort(parent?.reason);
  if (parent?.aborted) controller.abort(parent.reason);
  else parent?.addEventListener('abort', onAbort, { once: true });
  const timer =
    timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          expired = true;
          controller.abort(new Error(`timed out after ${timeoutMs} ms`));
        }, timeoutMs);
  return {
    signal: controller.signal,
    timedOut: () => expired,
    dispose: () => {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onAbort);
    },
  };
}
