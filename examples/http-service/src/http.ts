import type { IncomingMessage, ServerResponse } from 'node:http';

/** A request the service refuses, with the status to answer. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The request's JSON body, read up to `limit` bytes: a larger one (declared or sent) is refused
 * with 413 as soon as it is known, without holding more than `limit` bytes.
 */
export function readJson(req: IncomingMessage, limit: number): Promise<unknown> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) return Promise.reject(tooLarge(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      stop();
      // Nothing more is read until the answer goes out (see `refuse`).
      req.pause();
      chunks.length = 0;
      reject(tooLarge(limit));
    };
    const onEnd = () => {
      stop();
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        resolve(text ? JSON.parse(text) : {});
      } catch {
        reject(new HttpError(400, 'the body is not valid JSON'));
      }
    };
    const onError = (error: Error) => {
      stop();
      reject(error);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

const tooLarge = (limit: number) => new HttpError(413, `the body is larger than ${limit} bytes`);

export function send(res: ServerResponse, status: number, value: object, headers: Record<string, string> = {}) {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(value));
}

/**
 * Answers and closes the connection. What the client still sends of its body is read and
 * dropped, up to `discardLimit` bytes, so that it gets to read the answer; past that the
 * connection is cut.
 */
export function refuse(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  error: string,
  discardLimit: number,
  headers: Record<string, string> = {},
) {
  send(res, status, { error }, { ...headers, connection: 'close' });
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
