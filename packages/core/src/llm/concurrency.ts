import { err } from '../result.js';
import { type LlmPort, portComplete } from './llm.js';

/**
 * The port with at most `max` requests in flight; the others wait their turn, first come first
 * served. A thousand runs started at once then open `max` connections, not a thousand, and their
 * work is spread over the event loop instead of landing in one burst. A request's own time limit
 * starts when it is sent; a caller that aborts while waiting leaves the queue at once.
 */
export function limitConcurrency(port: LlmPort, max: number): LlmPort {
  if (max === Number.POSITIVE_INFINITY) return port;
  if (!Number.isInteger(max) || max < 1)
    throw new RangeError(`maxConcurrentRequests must be a positive integer, got ${max}`);
  let running = 0;
  const waiting: (() => void)[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else running--;
  };
  return {
    model: port.model,
    complete: portComplete(async (request, options = {}) => {
      const { signal } = options;
      if (running >= max) {
        const admitted = await new Promise<boolean>((resolve) => {
          const admit = () => {
            signal?.removeEventListener('abort', leave);
            resolve(true);
          };
          const leave = () => {
            const at = waiting.indexOf(admit);
            if (at >= 0) waiting.splice(at, 1);
            resolve(false);
          };
          if (signal?.aborted) return resolve(false);
          waiting.push(admit);
          signal?.addEventListener('abort', leave, { once: true });
        });
        if (!admitted) return err({ kind: 'aborted', message: 'the request was aborted before it was sent' });
      } else {
        running++;
      }
      try {
        return await port.complete(request, options);
      } finally {
        release();
      }
    }),
  };
}
