import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { bearerCheck, newToken } from './bearerToken.js';
import { boundedEventStore, type EventBufferLimits } from './eventStore.js';
import type { McpSession } from './session.js';

export interface HttpServeOptions {
  /** Default 8000; 0 takes a free port (see `url`). */
  readonly port?: number;
  /** The address to listen on (default 127.0.0.1: this machine only). */
  readonly host?: string;
  /** The bearer token every request must carry (default: a new random one, see `token`). */
  readonly token?: string;
  /**
   * More `Host` headers to accept, as `name:port` (a proxy's name). The loopback names with the
   * port are accepted when listening on loopback; any other Host is refused (DNS rebinding).
   */
  readonly allowedHosts?: readonly string[];
  /** Browser origins allowed to call (default: none but this server's own); requests without an Origin are not browsers'. */
  readonly allowedOrigins?: readonly string[];
  /**
   * A session with no request open for this long is ended, closing its shell and the rest (default
   * 30 minutes): a client that vanished without ending its session leaves nothing running for ever.
   */
  readonly idleSessionMs?: number;
  /**
   * The most sessions open at once (default 32), each with its own shell and browser context; the
   * server has one token, so this is also the cap per token. A new session beyond it ends the
   * session idle longest (no request open), and is refused with 503 when every one is busy.
   */
  readonly maxSessions?: number;
  /**
   * How much of each session's SSE traffic is kept so that a client whose stream broke can resume it
   * with `Last-Event-ID` (default: 200 events a stream, 4 MiB a session; the oldest go first).
   */
  readonly eventBuffer?: EventBufferLimits;
  /** How long a client should wait before reconnecting a broken stream: the SSE `retry` field (default 1 s). */
  readonly sseRetryMs?: number;
}

/** The server listening: where, with which token; `close` ends its sessions and stops it. */
export interface HttpServing {
  /** The MCP endpoint, e.g. `http://127.0.0.1:8000/mcp`. */
  readonly url: string;
  /** The bearer token: send `Authorization: Bearer <token>`. */
  readonly token: string;
  close(): Promise<void>;
}

const ENDPOINT = '/mcp';
const IDLE_SESSION_MS = 30 * 60_000;
const MAX_SESSIONS = 32;
const SSE_RETRY_MS = 1000;
const LOOPBACK = ['127.0.0.1', 'localhost', '[::1]'];

const hostName = (host: string) => (host.includes(':') ? `[${host}]` : host);
const isLoopback = (host: string) => LOOPBACK.includes(hostName(host)) || host.startsWith('127.');

/** One HTTP session: its transport, and how busy it is (requests open, the last time one began or ended). */
interface HttpSession {
  readonly transport: StreamableHTTPServerTransport;
  readonly session: McpSession;
  open: number;
  lastActive: number;
}

/** Counts `res` as open for `entry` until it closes. */
function track(entry: HttpSession, res: ServerResponse) {
  entry.open++;
  entry.lastActive = Date.now();
  res.once('close', () => {
    entry.open--;
    entry.lastActive = Date.now();
  });
}

/**
 * A JSON-RPC error answer for requests refused before they reach a session (as the SDK words its
 * own). The body is never read (a refused client may be sending 100 MB): the connection closes
 * once the answer is out, and Node drops the rest unread.
 */
function refuse(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}) {
  res
    .writeHead(status, { 'content-type': 'application/json', connection: 'close', ...headers })
    .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

/**
 * Streamable HTTP on one endpoint: every request carries the bearer token; a request without a
 * session starts one (its own run scope), later requests name it in `mcp-session-id`. The SDK's
 * transport checks the Host and Origin headers, so a web page cannot reach the server through a
 * name it rebinds to this machine, nor from the browser of the person running it.
 */
export async function serveHttp(
  connect: (transport: Transport) => Promise<McpSession>,
  options: HttpServeOptions,
  onError: (error: Error) => void,
): Promise<HttpServing> {
  const host = options.host ?? '127.0.0.1';
  const token = options.token ?? newToken();
  const authorized = bearerCheck(token);
  const sessions = new Map<string, HttpSession>();
  const maxSessions = options.maxSessions ?? MAX_SESSIONS;
  if (!Number.isInteger(maxSessions) || maxSessions < 1) {
    throw new RangeError(`maxSessions must be a positive integer, got ${maxSessions}`);
  }
  // The event buffer's limits are checked now, not when the first client arrives.
  boundedEventStore(options.eventBuffer);
  const retryMs = options.sseRetryMs ?? SSE_RETRY_MS;
  if (!Number.isInteger(retryMs) || retryMs < 0) {
    throw new RangeError(`sseRetryMs must be a whole number of milliseconds, got ${retryMs}`);
  }
  /** Sessions being started (their initialize under way): they count against the cap too. */
  let starting = 0;
  let allowedHosts: string[] = [];
  let allowedOrigins: string[] = [];

  /** Room for one more session: true, after ending the one idle longest if need be. */
  const makeRoom = (): boolean => {
    if (sessions.size + starting < maxSessions) return true;
    let idlest: [string, HttpSession] | undefined;
    for (const entry of sessions) {
      if (entry[1].open === 0 && (!idlest || entry[1].lastActive < idlest[1].lastActive)) idlest = entry;
    }
    if (!idlest) return false;
    sessions.delete(idlest[0]);
    void idlest[1].session.close();
    return true;
  };

  const startSession = async (req: IncomingMessage, res: ServerResponse) => {
    if (!makeRoom()) {
      return refuse(res, 503, `Too many sessions: all ${maxSessions} are busy; try again later`, {
        'retry-after': '5',
      });
    }
    // Its place is held from now on, so that initialize requests sent at once cannot pass the cap.
    starting++;
    let holding = true;
    const release = () => {
      if (holding) starting--;
      holding = false;
    };
    let session: McpSession | undefined;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      // Known before the answer to initialize leaves: the client's next request names it.
      onsessioninitialized: (id) => {
        if (!session) return;
        release();
        sessions.set(id, { transport, session, open: 0, lastActive: Date.now() });
        void session.closed.then(() => sessions.delete(id));
      },
      enableDnsRebindingProtection: true,
      allowedHosts,
      allowedOrigins,
      // Streams begin with an event id (and the retry time), so a client can resume one that broke.
      eventStore: boundedEventStore(options.eventBuffer),
      retryInterval: retryMs,
    });
    try {
      session = await connect(transport);
      await transport.handleRequest(req, res);
      // Anything but an initialize request was refused by the transport and starts nothing.
      if (transport.sessionId === undefined) await session.close();
    } finally {
      release();
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (new URL(req.url ?? '/', 'http://server').pathname !== ENDPOINT) {
      return refuse(res, 404, `Not found: the MCP endpoint is ${ENDPOINT}`);
    }
    if (!authorized(req.headers.authorization)) {
      return refuse(res, 401, 'Unauthorized: send the server’s token as "Authorization: Bearer <token>"', {
        'www-authenticate': 'Bearer realm="openmanus"',
      });
    }
    const id = req.headers['mcp-session-id'];
    if (id === undefined) {
      if (req.method !== 'POST') return refuse(res, 400, 'Bad Request: start a session with an initialize request');
      return startSession(req, res);
    }
    const known = typeof id === 'string' ? sessions.get(id) : undefined;
    if (!known) return refuse(res, 404, 'Session not found: start a new one with an initialize request');
    track(known, res);
    return known.transport.handleRequest(req, res);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      onError(error instanceof Error ? error : new Error(String(error)));
      if (!res.headersSent) refuse(res, 500, 'Internal error');
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8000, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const names = isLoopback(host) ? LOOPBACK : [hostName(host)];
  allowedHosts = [...names.map((name) => `${name}:${port}`), ...(options.allowedHosts ?? [])];
  allowedOrigins = [...names.map((name) => `http://${name}:${port}`), ...(options.allowedOrigins ?? [])];

  // A request open (a call running, a client listening on its stream) keeps a session alive.
  const idleMs = options.idleSessionMs ?? IDLE_SESSION_MS;
  const sweeper = setInterval(
    () => {
      const now = Date.now();
      for (const entry of sessions.values()) {
        if (entry.open === 0 && now - entry.lastActive >= idleMs) void entry.session.close();
      }
    },
    Math.min(idleMs, 60_000),
  );
  sweeper.unref();

  let closing: Promise<void> | undefined;
  return {
    url: `http://${hostName(host)}:${port}${ENDPOINT}`,
    token,
    close: () => {
      closing ??= (async () => {
        clearInterval(sweeper);
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        await Promise.allSettled([...sessions.values()].map(({ session }) => session.close()));
        // Streams of sessions that ended are closed by now; idle keep-alive connections go too.
        server.closeAllConnections();
        await stopped;
      })();
      return closing;
    },
  };
}
