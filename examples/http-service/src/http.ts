import type { IncomingMessage } from 'node:http';

/**
 * After a refusal: what the client still sends of its body is read and dropped, up to
 * `discardLimit` bytes, so that it gets to read the answer; past that the connection is cut.
 * Nothing of it is kept.
 */
export function discardRest(req: IncomingMessage, discardLimit: number) {
  if (req.complete) return;
  let discarded = 0;
  req.removeAllListeners('data');
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > discardLimit) req.socket.destroy();
  });
  req.on('error', () => undefined);
  req.resume();
}

/** One server-sent event: `id` lets a reconnecting client say where it was (`Last-Event-ID`). */
export const sseEvent = (message: { readonly id?: string; readonly data: object }): string =>
  `${message.id ? `id: ${message.id}\n` : ''}data: ${JSON.stringify(message.data)}\n\n`;
