// Every Engine API request with a time limit: a daemon that does not answer (a container stuck
// freezing, a daemon under load) fails the call instead of hanging the run, the next provider's
// orphan reaping, or the next sandbox.

import { hasErrorCode, OpenManusError } from '@openmanus/core';

/** How long a control request (exec create/start/inspect, pause, kill, remove, list…) may take. */
export const ENGINE_CALL_MS = 20_000;
/** How long starting or stopping a container may take (the daemon sets up or tears down its mounts and cgroups). */
export const CONTAINER_CALL_MS = 60_000;

/** A request the daemon did not answer in time. */
export class EngineTimeoutError extends OpenManusError<'ENGINE_TIMEOUT'> {
  static readonly codes = ['ENGINE_TIMEOUT'] as const;
  override readonly name = 'EngineTimeoutError';
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super('ENGINE_TIMEOUT', message, options);
  }
  static override isInstance(value: unknown): value is EngineTimeoutError {
    return hasErrorCode(value, EngineTimeoutError.codes);
  }
}

/**
 * Runs `call` with an abort signal (dockerode's `abortSignal`) that fires after `ms`, and fails
 * with an `EngineTimeoutError` naming `what` then. The signal never fires once the call has
 * settled, so a stream it returned (an exec's) lives on.
 */
export async function engineCall<T>(
  what: string,
  call: (abortSignal: AbortSignal) => Promise<T>,
  ms = ENGINE_CALL_MS,
): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new EngineTimeoutError(`docker: ${what} got no answer within ${ms / 1000} s`));
    }, ms);
  });
  try {
    return await Promise.race([call(controller.signal), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
