import { messageOf } from '@openmanus/core';
import type { Principal, RunMessage, Runs } from './runs.js';

/** One server-sent event: `id` lets a reconnecting client say where it was (`Last-Event-ID`). */
export const sseEvent = (message: RunMessage): string =>
  `${message.id ? `id: ${message.id}\n` : ''}data: ${JSON.stringify(message.data)}\n\n`;

/** What keeps a quiet stream open: a comment line, ignored by EventSource and every SSE parser. */
const HEARTBEAT = ': heartbeat\n\n';

/**
 * A run's events as a `text/event-stream` response, from `Last-Event-ID` on when the request
 * names one; it ends when the run's leg ends or pauses, and a client that goes away unsubscribes.
 * A comment every `heartbeatMs` keeps proxies and load balancers from closing it during a long
 * model call.
 */
export async function eventStream(
  runs: Runs,
  id: string,
  who: Principal,
  request: Request,
  log: (line: string) => void,
  heartbeatMs: number,
): Promise<Response> {
  await runs.view(id, who); // 404 while an answer can still say so
  const encoder = new TextEncoder();
  let unsubscribe: () => void = () => undefined;
  let closed = false;
  let heartbeat: NodeJS.Timeout | undefined;
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      const close = () => {
        if (closed) return;
        closed = true;
        clearInterval(heartbeat);
        unsubscribe();
        controller.close();
      };
      heartbeat = setInterval(() => {
        if (!closed) controller.enqueue(encoder.encode(HEARTBEAT));
      }, heartbeatMs);
      heartbeat.unref();
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
      clearInterval(heartbeat);
      unsubscribe();
    },
  });
  return new Response(body, {
    headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' },
  });
}
