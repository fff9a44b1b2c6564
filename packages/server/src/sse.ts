import { messageOf } from '@openmanus/core';
import type { Principal, RunMessage, Runs } from './runs.js';

/** One server-sent event: `id` lets a reconnecting client say where it was (`Last-Event-ID`). */
export const sseEvent = (message: RunMessage): string =>
  `${message.id ? `id: ${message.id}\n` : ''}data: ${JSON.stringify(message.data)}\n\n`;

/**
 * A run's events as a `text/event-stream` response, from `Last-Event-ID` on when the request
 * names one; it ends when the run's leg ends or pauses, and a client that goes away unsubscribes.
 */
export async function eventStream(
  runs: Runs,
  id: string,
  who: Principal,
  request: Request,
  log: (line: string) => void,
): Promise<Response> {
  await runs.view(id, who); // 404 while an answer can still say so
  const encoder = new TextEncoder();
  let unsubscribe: () => void = () => undefined;
  let closed = false;
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      const close = () => {
        if (closed) return;
        closed = true;
        unsubscribe();
        controller.close();
      };
      request.signal.addEventListener('abort', close, { once: true });
      unsubscribe = await runs
        .subscribe(
          id,
          who,
          {
            send: (message) => {
              if (!closed) controller.enqueue(encoder.encode(sseEvent(message)));
            },
            end: close,
          },
          request.headers.get('last-event-id') ?? undefined,
        )
        .catch((error: unknown) => {
          log(`events of run ${id}: ${messageOf(error)}`);
          close();
          return () => undefined;
        });
      if (closed) unsubscribe();
    },
    cancel() {
      closed = true;
      unsubscribe();
    },
  });
  return new Response(body, {
    headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' },
  });
}
