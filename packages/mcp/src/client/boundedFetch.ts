/** The most one message of a remote server may be: as the SDK's own limit on a stdio line. */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

const NO_BODY: ReadonlySet<number> = new Set([101, 204, 205, 304]);

/** How a request's answer broke. */
export interface Breakage {
  /** Its headers had come: its body broke off, or went over the limit (else the request failed). */
  readonly answered: boolean;
  /** It was an event stream with event ids: the SDK resumes it (Last-Event-ID), unless it went over the limit. */
  readonly resumable: boolean;
  readonly overLimit: boolean;
}

export type OnBroken = (init: RequestInit | undefined, error: Error, how: Breakage) => void;

const ID_FIELD = [0x69, 0x64, 0x3a]; // "id:" at the start of a line

export interface BoundedFetchOptions {
  /** The most bytes of one message (default `MAX_MESSAGE_BYTES`). */
  readonly limit?: number;
  /**
   * Told when a request fails on the way — the network, the server gone, a message over the limit —
   * never when its own signal aborted it (the SDK ending its streams as it closes).
   */
  readonly onBroken?: OnBroken;
}

/**
 * `fetch` whose answers carry messages of at most `limit` bytes: a JSON answer in all, an event
 * stream per event (counted since its last blank line, so a stream may last for ever). A server that
 * sends more gets its answer cut off with an error, before the SDK has buffered it whole: over HTTP
 * the SDK reads any answer to its end, so a server could otherwise fill the host's memory. Reading
 * stops there: the rest is never fetched.
 */
export function boundedFetch({ limit = MAX_MESSAGE_BYTES, onBroken }: BoundedFetchOptions = {}): typeof fetch {
  const broke = (init: RequestInit | undefined, error: unknown, how: Breakage) => {
    if (!init?.signal?.aborted) onBroken?.(init, error instanceof Error ? error : new Error(String(error)), how);
  };
  return async (input, init) => {
    let response: Response;
    try {
      response = await fetch(input, init);
    } catch (error) {
      broke(init, error, { answered: false, resumable: false, overLimit: false });
      throw error;
    }
    // An answer that has no body, or may not be given one anew.
    if (!response.body || NO_BODY.has(response.status)) return response;
    const stream = (response.headers.get('content-type') ?? '').includes('text/event-stream');
    const reader = response.body.getReader();
    let pending = 0;
    let lineEmpty = true;
    let column = 0;
    let resumable = false;
    const counted = new ReadableStream<Uint8Array>({
      async pull(controller) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (error) {
          broke(init, error, { answered: true, resumable, overLimit: false });
          controller.error(error);
          return;
        }
        if (chunk.done) {
          controller.close();
          return;
        }
        if (stream) {
          for (const byte of chunk.value) {
            if (byte === 0x0a) {
              if (lineEmpty) pending = 0;
              lineEmpty = true;
              column = 0;
            } else {
              if (byte !== 0x0d) lineEmpty = false;
              if (column < ID_FIELD.length && byte === ID_FIELD[column]) {
                column++;
                if (column === ID_FIELD.length) resumable = true;
              } else column = ID_FIELD.length + 1;
            }
            if (++pending > limit) break;
          }
        } else pending += chunk.value.length;
        if (pending > limit) {
          const error = new Error(`the server sent a message of more than ${limit / 1024 / 1024} MB`);
          reader.cancel(error).catch(() => undefined);
          broke(init, error, { answered: true, resumable, overLimit: true });
          controller.error(error);
          return;
        }
        controller.enqueue(chunk.value);
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(counted, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
