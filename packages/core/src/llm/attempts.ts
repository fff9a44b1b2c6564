import { err, type Result } from '../result.js';
import type { LlmDelta, LlmError, LlmResponse } from './llm.js';
import type { PortLimits } from './portOptions.js';
import { DeltaListenerError } from './replyStream.js';
import { RequestGuard, sleep } from './requestGuard.js';

/** One model request of a port on a provider's SDK, and how its failures read. */
export interface Attempts {
  readonly signal: AbortSignal | undefined;
  /** The deadline, the idle limit, and the tries after the first one for a reply that failed mid-way. */
  readonly limits: Pick<PortLimits, 'timeoutMs' | 'idleTimeoutMs' | 'maxRetries'>;
  /** A streamed reply's listener: a retried stream starts over, so it is told to drop what it heard. */
  readonly streamListener?: ((delta: LlmDelta) => void) | undefined;
  /** One attempt, the SDK's own retries included, under the guard (its signal, its idle timer). */
  readonly send: (guard: RequestGuard) => Promise<Result<LlmResponse, LlmError>>;
  /**
   * What a failed attempt says, and whether it failed mid-way — after the headers, where the SDK
   * does not retry (a cut connection, an overloaded error in the stream) — to be tried again here.
   */
  readonly failure: (thrown: unknown) => { readonly error: LlmError; readonly midway: boolean };
}

/**
 * A request under one guard (deadline, idle stream, the caller's abort) for all its attempts: a
 * reply that failed mid-way is requested again, up to `maxRetries` times with a growing pause (or
 * the wait the provider asked for); a failing delta listener's error is thrown, as the port's
 * contract says.
 */
export async function attempt(request: Attempts): Promise<Result<LlmResponse, LlmError>> {
  // One guard per request: an SDK never removes its listener from the signal it gets.
  const { timeoutMs, idleTimeoutMs, maxRetries } = request.limits;
  const guard = new RequestGuard(request.signal, timeoutMs, idleTimeoutMs);
  try {
    for (let tried = 0; ; tried++) {
      if (tried > 0) request.streamListener?.({ restart: true });
      const outcome = await guard.race(request.send(guard));
      guard.streamEnded();
      if ('value' in outcome) return outcome.value;
      if ('stopped' in outcome) return err(outcome.stopped);
      if (outcome.error instanceof DeltaListenerError) throw outcome.error.cause;
      // The failure may be the abort itself: then why it was aborted is the answer.
      const stopped = guard.stopped();
      if (stopped) return err(stopped);
      const { error, midway } = request.failure(outcome.error);
      if (!midway || tried >= maxRetries) return err(error);
      const waited = await guard.race(sleep(pauseBefore(error, tried)));
      if ('stopped' in waited) return err(waited.stopped);
    }
  } finally {
    guard.dispose();
  }
}

/** The provider's Retry-After where it gives a sane one (a minute at most), else a pause growing with each try. */
function pauseBefore(error: LlmError, tried: number): number {
  const asked = error.retryAfterMs;
  return asked !== undefined && asked <= 60_000 ? asked : Math.min(500 * 2 ** tried, 8_000);
}
