import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttp2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { bothProtocols } from './bothProtocols.js';
import {
  nextReply,
  type Script,
  type ScriptedAnswer,
  type ScriptedFailure,
  type ScriptedReply,
  sleep,
  unused,
} from './script.js';

/** What a stand-in's route gets: the request, its parsed JSON body, and the script's reply to it. */
export interface ScriptedExchange<Request> {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The path without the query. */
  readonly path: string;
  readonly body: Request;
  /** Which reply of the script this is (0, 1, …). */
  readonly index: number;
  /** The script's reply; `undefined` once the script is exhausted. */
  readonly reply: ScriptedReply | undefined;
}

/** What every stand-in's options hold: its script, and whether it keeps what it was sent. */
export interface StandInOptions<Request> {
  readonly script: Script<Request>;
  /**
   * Keep every request for the test to read (default). A long-lived server (a benchmark serving
   * thousands of long histories) turns it off: it then keeps only the count, and `requests` and `paths` stay empty.
   */
  readonly keepRequests?: boolean | undefined;
}

export interface ScriptedHttpOptions<Request> extends StandInOptions<Request> {
  /**
   * Answers a request without taking a reply of the script (a model list, a 404), or `false` for
   * a request that takes the script's next reply, which `answer` then sends.
   */
  readonly route?: (req: IncomingMessage, res: ServerResponse, path: string) => boolean;
  /**
   * Speak HTTP/2 without TLS (h2c, prior knowledge) as well, on the same port, as the AWS SDK's
   * default Node handler does; its compatibility API's request and response stand in for node:http's.
   */
  readonly http2?: boolean;
  /** Reads the body as the provider's API sends it (default JSON), with the path it was sent to. */
  readonly parse?: (raw: Buffer, path: string) => Request;
  readonly answer: (exchange: ScriptedExchange<Request>) => Promise<void> | void;
}

/** What every provider's stand-in gives its test, besides the address its clients take. */
export interface StandInServer<Request> {
  /** Every request's body as the server received it, in order. */
  readonly requests: readonly Request[];
  /** The path and query of every request, in order. */
  readonly paths: readonly string[];
  /** How many requests took a reply of the script, retries included. */
  readonly hits: number;
  /** Throws unless every reply of the script was requested. */
  assertConsumed(): void;
  close(): Promise<void>;
}

export interface ScriptedHttpServer<Request> extends StandInServer<Request> {
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
}

/** A stand-in as its test sees it: the scripted server's requests and controls, with its own address. */
export function standIn<Request, Address extends object>(
  server: ScriptedHttpServer<Request>,
  address: Address,
): StandInServer<Request> & Address {
  return {
    ...address,
    requests: server.requests,
    paths: server.paths,
    get hits() {
      return server.hits;
    },
    assertConsumed: () => server.assertConsumed(),
    close: () => server.close(),
  };
}

/**
 * A real HTTP server on 127.0.0.1 (random port) that answers each model request with the next
 * reply of a script, in the wire format its `answer` writes: the plumbing every provider's
 * stand-in shares (the OpenAI-compatible server and the others).
 */
export async function startScriptedHttp<Request>(
  options: ScriptedHttpOptions<Request>,
): Promise<ScriptedHttpServer<Request>> {
  const requests: Request[] = [];
  const paths: string[] = [];
  let served = 0;
  const keep = options.keepRequests ?? true;
  const parse = options.parse ?? ((raw: Buffer) => JSON.parse(raw.toString('utf8')) as Request);
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: String(error), type: 'server_error' } }));
    });
  };
  const http1 = createServer(onRequest);
  const both = options.http2
    ? bothProtocols(
        http1,
        createHttp2Server((req, res) => onRequest(req as unknown as IncomingMessage, res as unknown as ServerResponse)),
      )
    : undefined;
  const server = both?.server ?? http1;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '';
    if (keep) paths.push(url);
    const path = new URL(url, 'http://127.0.0.1').pathname;
    if (options.route?.(req, res, path)) return;
    const body = parse(await readBody(req), path);
    const index = served++;
    if (keep) requests.push(body);
    const reply = nextReply(options.script, index, body);
    if (reply?.delayMs) await sleep(reply.delayMs);
    await options.answer({ req, res, path, body, index, reply });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    paths,
    get hits() {
      return served;
    },
    assertConsumed() {
      const left = unused(options.script, served);
      if (left > 0) throw new Error(`scripted server: ${left} of ${left + served} replies were never requested`);
    },
    close: () =>
      new Promise<void>((resolve) => {
        http1.closeAllConnections();
        for (const socket of both?.sockets ?? []) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/** A failure's Retry-After headers as the script gives them. */
export function retryHeaders(error: {
  readonly retryAfter?: number;
  readonly retryAfterMs?: number;
}): Record<string, string> {
  const headers: Record<string, string> = {};
  if (error.retryAfter !== undefined) headers['retry-after'] = String(error.retryAfter);
  if (error.retryAfterMs !== undefined) headers['retry-after-ms'] = String(error.retryAfterMs);
  return headers;
}

/** A provider's names for its errors: by HTTP status, else its name for a server's fault and for a client's. */
export interface ErrorNames {
  readonly byStatus: Readonly<Record<number, string>>;
  readonly server: string;
  readonly client: string;
}

/** The provider's name for an error of this status. */
export const errorNameOf = (names: ErrorNames, status: number): string =>
  names.byStatus[status] ?? (status >= 500 ? names.server : names.client);

/**
 * Sends a scripted failure: without a status, the connection dropped; else what `send` makes of
 * its status and message (the script's, or `scripted HTTP <status>`), with the script's Retry-After.
 */
export function sendFailure(
  res: ServerResponse,
  error: ScriptedFailure['error'],
  send: (status: number, message: string, headers: Record<string, string>) => void,
): void {
  if (error.status === undefined) {
    res.destroy();
    return;
  }
  send(error.status, error.message ?? `scripted HTTP ${error.status}`, retryHeaders(error));
}

/** A reply's JSON sent whole: at once, or in pieces of it as the script says (paced, stalled, cut, ended early). */
export function sendReply(res: ServerResponse, body: unknown, reply: ScriptedAnswer): Promise<void> | void {
  if (!deliveredInPieces(reply)) return sendJson(res, 200, body);
  const text = Buffer.from(JSON.stringify(body));
  return deliver(
    res,
    { 'content-type': 'application/json', 'content-length': String(text.length) },
    piecesOf(text),
    reply,
  );
}

/** The usage a reply reports where the script gives none: about 4 characters a token of what was sent and said. */
export const estimatedUsage = (sent: string, said: string): NonNullable<ScriptedAnswer['usage']> => ({
  inputTokens: Math.ceil(sent.length / 4),
  outputTokens: Math.ceil(said.length / 4),
});

/** Text in pieces of 16 characters, as a stream's deltas bring it. */
export function textPieces(text: string): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += 16) pieces.push(text.slice(i, i + 16));
  return pieces;
}

/** A stream's events, cut after a scripted mid-stream error's count and ended with that error as the wire says it. */
export function withMidStreamError<Event>(
  events: Event[],
  reply: ScriptedAnswer,
  errorEvent: (failure: NonNullable<ScriptedAnswer['midStreamError']>) => Event,
): Event[] {
  const failure = reply.midStreamError;
  return failure ? [...events.slice(0, failure.after), errorEvent(failure)] : events;
}

/** Whether the reply is to be sent in pieces (paced, stalled, cut or ended early) rather than at once. */
export const deliveredInPieces = (reply: ScriptedAnswer): boolean =>
  reply.trickleMs !== undefined ||
  reply.stallAfter !== undefined ||
  reply.cutAfter !== undefined ||
  reply.endAfter !== undefined;

/** A body cut into pieces of 16 bytes, for `deliver`. */
export function piecesOf(text: string | Buffer): Buffer[] {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  const pieces: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += 16) pieces.push(bytes.subarray(i, i + 16));
  return pieces;
}

/**
 * Sends the headers, then the body's pieces: all at once, or paced (`trickleMs`), stopping
 * after `stallAfter` pieces with the connection left open, cutting it after `cutAfter`, or
 * ending the reply after `endAfter` as if it were complete.
 */
export async function deliver(
  res: ServerResponse,
  headers: Record<string, string>,
  pieces: readonly (string | Buffer | Uint8Array)[],
  reply: ScriptedAnswer,
): Promise<void> {
  const { trickleMs, stallAfter, cutAfter, endAfter } = reply;
  res.writeHead(200, headers);
  res.flushHeaders();
  for (let i = 0; i < pieces.length; i++) {
    if (i === stallAfter) return;
    if (i === cutAfter) {
      // What was written goes out first, as before a connection cut (HTTP/2 sends it a turn later).
      await new Promise((resolve) => setImmediate(resolve));
      res.destroy();
      return;
    }
    if (i === endAfter) break;
    if (trickleMs) await sleep(trickleMs);
    if (res.destroyed) return;
    res.write(pieces[i]);
  }
  res.end();
}

export const streamHeaders = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
};
