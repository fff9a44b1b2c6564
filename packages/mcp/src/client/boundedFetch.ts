/** The most one message of a remote server may be: as the SDK's own limit on a stdio line. */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

const NO_BODY: ReadonlySet<number> = new Set([101, 204, 205, 304]);

/**
 * `fetch` whose answers carry messages of at most `limit` bytes: a JSON answer in all, an event
 * stream per event (counted since its last blank line, so a stream may last for ever). A server that
 * sends more gets its answer cut off with an error, before the SDK has buffered it whole: over HTTP
 * the SDK reads any answer to its end, so a server could otherwise fill the host's memory.
 */
export function boundedFetch(limit = MAX_MESSAGE_BYTES): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    // An answer that has no body, or may not be given one anew.
    if (!response.body || NO_BODY.has(response.status)) return response;
    const stream = (response.headers.get('content-type') ?? '').includes('text/event-stream');
    let pending = 0;
    let lineEmpty = true;
    const counted = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          if (stream) {
            for (const byte of chunk) {
              if (byte === 0x0a) {
                if (lineEmpty) pending = 0;
                lineEmpty = true;
              } else if (byte !== 0x0d) lineEmpty = false;
              if (++pending > limit) break;
            }
          } else pending += chunk.length;
          if (pending > limit) {
            controller.error(new Error(`the server sent a message of more than ${limit / 1024 / 1024} MB`));
            return;
          }
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(counted, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
