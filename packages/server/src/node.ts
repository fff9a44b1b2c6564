import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';

/** A `node:http` request listener (Express middleware has the same shape). */
export type NodeListener = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => void;

export interface NodeListenerOptions {
  /** After a refusal, how much of the rest of the body is read and dropped (so the client reads the answer) before the connection is cut. */
  readonly discardLimit: number;
}

/** A web `Request` of a Node request: its headers, its body as a stream, a signal aborted when the client goes. */
export function webRequestOf(req: IncomingMessage, res: ServerResponse): Request {
  const controller = new AbortController();
  res.on('close', () => controller.abort());
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  // Express mounts strip their path from `url`; the host is checked from the header, not from this URL.
  const url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
  return new Request(url, {
    method: req.method ?? 'GET',
    headers,
    signal: controller.signal,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: 'half' } : {}),
  } as RequestInit);
}

/** Writes a web `Response` to a Node one, streaming its body; a client that goes away cancels the stream. */
export async function writeResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    headers[name] = name === 'set-cookie' ? response.headers.getSetCookie() : value;
  });
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  res.on('close', () => void reader.cancel().catch(() => undefined));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await new Promise<void>((resolve) => res.once('drain', resolve).once('close', resolve));
    }
  } catch {
    // The client went away, or the body failed: the response ends here.
  }
  res.end();
}

/**
 * After a refusal: what the client still sends of its body is read and dropped, up to
 * `limit` bytes, so that it gets to read the answer; past that the connection is cut.
 */
function discardRest(req: IncomingMessage, limit: number) {
  if (req.complete) return;
  let discarded = 0;
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > limit) req.socket.destroy();
  });
  req.on('error', () => undefined);
  req.resume();
}

/** `fetch` as a Node listener: for `http.createServer`, Express (`app.use(path, listener)`), a Fastify route's raw objects. */
export function toNodeListener(
  fetch: (request: Request) => Promise<Response>,
  options: NodeListenerOptions,
): NodeListener {
  return (req, res, next) => {
    void (async () => {
      const response = await fetch(webRequestOf(req, res));
      if (response.headers.get('connection') === 'close') discardRest(req, options.discardLimit);
      await writeResponse(response, res);
    })().catch((error: unknown) => {
      if (next) next(error);
      else if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });
  };
}
