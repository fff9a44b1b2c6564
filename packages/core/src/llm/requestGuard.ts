import { afterDelay } from '../deadline.js';
import { onAbort } from '../onAbort.js';
import type { LlmError } from './llm.js';

/** Node's timers overflow past this (2^31 - 1 ms, about 24.8 days) and fire at once. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** A port's time limit option, checked: a positive number of ms that Node's timers can wait. */
export function checkedMs(name: string, value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isFinite(value) || value <= 0 || value > MAX_TIMEOUT_MS) {
    throw new RangeError(`${name} must be more than 0 and at most ${MAX_TIMEOUT_MS} ms, got ${value}`);
  }
  return Math.ceil(value);
}

export type Raced<T> = { readonly value: T } | { readonly error: unknown } | { readonly stopped: LlmError };

/**
 * One request's limits: a deadline for all of it (headers, body, stream, retries), the caller's
 * cancel, and a stream's idle timer. Whichever fires first aborts the SDK's request (its body
 * read too) and ends the wait for it, even where the SDK would not notice at once. A class: one
 * is made per request, and its methods are shared instead of made per request.
 */
export class RequestGuard {
  private readonly controller = new AbortController();
  private reason: LlmError | undefined;
  // The wait in progress (`race`), told when the request is stopped.
  private onHalt: ((stopped: { stopped: LlmError }) => void) | undefined;
  private readonly release: (() => void) | undefined;
  // One timer for both limits, not restarted per chunk (a timer per chunk, or one per limit, costs
  // more than the chunks): each chunk notes the time, and the timer, when it fires, checks both
  // and waits on for whichever is due next. Before the first chunk, only the deadline counts.
  private readonly started = performance.now();
  private lastChunk: number | undefined;
  private cancelTimer: () => void;

  constructor(
    caller: AbortSignal | undefined,
    private readonly timeoutMs: number,
    private readonly idleMs: number,
  ) {
    this.release = caller && onAbort(caller, () => this.halt({ kind: 'aborted', message: 'the request was aborted' }));
    this.cancelTimer = afterDelay(Math.min(timeoutMs, idleMs), this.check);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Why the request was stopped, if it was. */
  stopped(): LlmError | undefined {
    return this.reason;
  }

  /** The work's outcome, or why the request was stopped first (the work's late failure is dropped). */
  race<T>(work: Promise<T>): Promise<Raced<T>> {
    if (this.reason) return Promise.resolve({ stopped: this.reason });
    return new Promise<Raced<T>>((resolve) => {
      this.onHalt = resolve;
      work.then(
        (value) => resolve({ value }),
        (error: unknown) => resolve({ error }),
      );
    });
  }

  /** A chunk came: quiet for `idleMs` from now ends the stream. */
  readonly chunkArrived = (): void => {
    this.lastChunk = performance.now();
  };

  /** The attempt is over: a retry waits for its first chunk under the deadline alone. */
  streamEnded(): void {
    this.lastChunk = undefined;
  }

  dispose(): void {
    this.cancelTimer();
    this.release?.();
  }

  private halt(why: LlmError): void {
    if (this.reason) return;
    this.reason = why;
    this.onHalt?.({ stopped: why });
    this.controller.abort(new Error(why.message));
  }

  private readonly check = (): void => {
    const now = performance.now();
    const { started, timeoutMs, idleMs, lastChunk } = this;
    if (now - started >= timeoutMs) {
      this.halt({ kind: 'timeout', message: `no complete reply within ${timeoutMs} ms (the configured timeout)` });
    } else if (lastChunk !== undefined && now - lastChunk >= idleMs) {
      this.halt({ kind: 'timeout', message: `the reply stream went quiet for ${idleMs} ms` });
    } else {
      // No chunk yet: looked at again in `idleMs`, so that a first chunk coming after this check
      // still starts the idle limit (waiting for the deadline alone would let a stall after it run on).
      const idleDue = (lastChunk ?? now) + idleMs;
      this.cancelTimer = afterDelay(Math.min(started + timeoutMs, idleDue) - now, this.check);
    }
  };
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
