import { afterDelay } from '../deadline.js';
import { onAbort } from '../onAbort.js';

export interface AbortLink {
  /** The child signal; made on first use, since most tools never look at it. */
  readonly signal: AbortSignal;
  /** Resolves when the parent aborts or the time limit passes. */
  readonly stopped: Promise<void>;
  /** The link's own time limit fired (not the parent). */
  timedOut(): boolean;
  /** Detaches from the parent and stops the timer; call when the work is over. */
  dispose(): void;
}

/**
 * A child of `parent` that also stops after `timeoutMs`, and lets go of the parent afterwards
 * (AbortSignal.any and the SDK keep listeners on a long-lived run signal).
 */
export function linkAbort(parent: AbortSignal | undefined, timeoutMs?: number): AbortLink {
  let controller: AbortController | undefined;
  let reason: unknown;
  let expired = false;
  let resolveStopped: () => void = () => {};
  const stopped = new Promise<void>((resolve) => {
    resolveStopped = resolve;
  });
  const fire = (why: unknown) => {
    if (reason !== undefined) return;
    reason = why ?? new Error('aborted');
    controller?.abort(reason);
    resolveStopped();
  };
  const release = parent && onAbort(parent, () => fire(parent.reason));
  const cancelTimer =
    timeoutMs === undefined
      ? undefined
      : afterDelay(timeoutMs, () => {
          expired = true;
          fire(new Error(`timed out after ${timeoutMs} ms`));
        });
  return {
    get signal() {
      if (!controller) {
        controller = new AbortController();
        if (reason !== undefined) controller.abort(reason);
      }
      return controller.signal;
    },
    stopped,
    timedOut: () => expired,
    dispose: () => {
      cancelTimer?.();
      release?.();
    },
  };
}
