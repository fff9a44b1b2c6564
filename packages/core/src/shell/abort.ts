import { afterDelay } from '../deadline.js';
import { onAbort } from '../onAbort.js';

export interface AbortLink {
  /** The child signal; made on first use, since most tools never look at it. */
  readonly signal: AbortSignal;
  /** Resolves when the parent aborts or the time limit passes. */
  readonly stopped: Promise<void>;
  /** Stopped already, by the parent or the time limit. */
  readonly isStopped: boolean;
  /** The link's own time limit fired (not the parent). */
  timedOut(): boolean;
  /**
   * Stops the time limit until the returned function is called: time spent waiting on a person is
   * not the work's. Pauses nest (the limit runs again when the last one ends); the parent still
   * stops the link meanwhile.
   */
  pause(): () => void;
  /** Detaches from the parent and stops the timer; call when the work is over. */
  dispose(): void;
}

/**
 * A child of `parent` that also stops after `timeoutMs`, and lets go of the parent afterwards
 * (AbortSignal.any and the SDK keep listeners on a long-lived run signal). `onStop` is told
 * when it stops, once.
 */
export function linkAbort(parent: AbortSignal | undefined, timeoutMs?: number, onStop?: () => void): AbortLink {
  return new Link(parent, timeoutMs, onStop);
}

// A class: a tool call makes one per call, and its methods are shared instead of made per link.
class Link implements AbortLink {
  private controller: AbortController | undefined;
  private reason: unknown;
  private expired = false;
  // Made only when asked for: most links end without anyone waiting on them.
  private stoppedPromise: Promise<void> | undefined;
  private resolveStopped: (() => void) | undefined;
  private readonly release: (() => void) | undefined;
  private cancelTimer: (() => void) | undefined;
  /** What is left of the time limit, as of `since` (none: no limit, or the work is over). */
  private left: number | undefined;
  private since = 0;
  private pauses = 0;

  constructor(
    parent: AbortSignal | undefined,
    private readonly timeoutMs: number | undefined,
    private readonly onStop: (() => void) | undefined,
  ) {
    this.release = parent && onAbort(parent, () => this.fire(parent.reason));
    this.left = timeoutMs;
    this.arm();
  }

  private arm(): void {
    if (this.left === undefined || this.reason !== undefined) return;
    this.since = performance.now();
    this.cancelTimer = afterDelay(this.left, this.expire);
  }

  private readonly expire = () => {
    this.expired = true;
    this.fire(new Error(`timed out after ${this.timeoutMs} ms`));
  };

  private fire(why: unknown): void {
    if (this.reason !== undefined) return;
    this.reason = why ?? new Error('aborted');
    this.controller?.abort(this.reason);
    this.resolveStopped?.();
    this.onStop?.();
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.reason !== undefined) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  get stopped(): Promise<void> {
    if (!this.stoppedPromise) {
      this.stoppedPromise =
        this.reason !== undefined
          ? Promise.resolve()
          : new Promise<void>((resolve) => {
              this.resolveStopped = resolve;
            });
    }
    return this.stoppedPromise;
  }

  get isStopped(): boolean {
    return this.reason !== undefined;
  }

  timedOut(): boolean {
    return this.expired;
  }

  pause(): () => void {
    if (this.pauses++ === 0 && this.cancelTimer) {
      this.cancelTimer();
      this.cancelTimer = undefined;
      if (this.left !== undefined) this.left = Math.max(0, this.left - (performance.now() - this.since));
    }
    let resumed = false;
    return () => {
      if (resumed) return;
      resumed = true;
      if (--this.pauses === 0) this.arm();
    };
  }

  dispose(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    // A pause that ends after the work does not start the limit again.
    this.left = undefined;
    this.release?.();
  }
}
