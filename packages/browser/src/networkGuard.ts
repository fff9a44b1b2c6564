import { Agent, createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type LookupFunction, type Socket } from 'node:net';
import { addressRefusal, connectionLookup, type NetworkPolicy, type Resolver } from '@openmanus/tools';
import type { BrowserContext } from 'playwright-core';

// Every request the browser makes goes through a proxy on 127.0.0.1 that opens the connections
// itself, each through the network policy's checked DNS lookup: a page (or a prompt-injected model)
// cannot make the browser reach this machine, its network or a cloud metadata service — not by a
// URL, a redirect, a subresource, a WebSocket or a name that resolves to a private address later
// (DNS rebinding), since what is checked is the address the connection goes to.

/** Marks the proxy's own refusal pages (plain http), so a refused page is not taken for the site's. */
export const REFUSAL_HEADER = 'x-openmanus-refused';

/** Refusals seen, for telling the model why a page did not load. */
export interface RefusalLog {
  /** The last refusal for this URL's host (and port), if any. */
  refusalFor(url: string): string | undefined;
}

export interface GuardProxy extends RefusalLog {
  /** For `browser.newContext({ proxy })`. */
  readonly server: string;
  close(): Promise<void>;
}

/** Headers that belong to one connection, not to the request or response forwarded. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'upgrade',
]);

/** Raw header pairs (`[name, value, name, value…]`) without the hop-by-hop ones (and any others named). */
function forwardable(raw: readonly string[], dropped: ReadonlySet<string> = HOP_BY_HOP): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] ?? '';
    if (!dropped.has(name.toLowerCase())) out.push(name, raw[i + 1] ?? '');
  }
  return out;
}

/** A site's response loses the hop-by-hop headers and any refusal mark it wrote itself. */
const NOT_FROM_SITES = new Set([...HOP_BY_HOP, REFUSAL_HEADER]);

const DEFAULT_PORTS: Readonly<Record<string, string>> = { 'http:': '80', 'ws:': '80', 'https:': '443', 'wss:': '443' };

/** Refusals by host and port, for telling the model why a page did not load. */
function refusalLog() {
  const refusals = new Map<string, string>();
  const keyOf = (url: URL) => `${url.hostname}:${url.port || DEFAULT_PORTS[url.protocol] || ''}`;
  return {
    record: (url: URL, message: string) => void refusals.set(keyOf(url), message),
    refusalFor(target: string): string | undefined {
      try {
        return refusals.get(keyOf(new URL(target)));
      } catch {
        return undefined;
      }
    },
  };
}
const bare = (hostname: string) => hostname.replace(/^\[(.*)\]$/, '$1');

/** Starts the proxy for a browser context under the policy; `resolve` looks names up (default: the system's). */
export async function startGuardProxy(policy: NetworkPolicy, resolve?: Resolver): Promise<GuardProxy> {
  const log = refusalLog();
  const agent = new Agent({ keepAlive: true });
  const lookupFor = (url: URL): LookupFunction | Error => connectionLookup(url, policy, resolve);
  const refused = (url: URL, error: Error) => {
    log.record(url, error.message);
    return error.message;
  };
  const isRefusal = (error: Error) => error.name === 'AddressRefusedError';

  const forward = (req: IncomingMessage, res: ServerResponse) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end('this proxy only forwards absolute http:// URLs');
      return;
    }
    const deny = (status: number, text: string, refusal = false) => {
      if (!res.headersSent) {
        res.writeHead(status, {
          'content-type': 'text/plain; charset=utf-8',
          ...(refusal ? { [REFUSAL_HEADER]: 'network policy' } : {}),
        });
      }
      res.end(text);
    };
    const lookup = url.protocol === 'http:' ? lookupFor(url) : new Error(`${url.protocol} is not forwarded`);
    if (lookup instanceof Error) {
      return isRefusal(lookup) ? deny(403, refused(url, lookup), true) : deny(400, lookup.message);
    }
    const upstream = httpRequest(
      {
        host: bare(url.hostname),
        port: url.port || 80,
        method: req.method,
        path: url.pathname + url.search,
        headers: forwardable(req.rawHeaders),
        lookup,
        agent,
      },
      (response) => {
        res.writeHead(
          response.statusCode ?? 502,
          response.statusMessage,
          forwardable(response.rawHeaders, NOT_FROM_SITES),
        );
        response.pipe(res);
      },
    );
    upstream.on('error', (error) =>
      isRefusal(error)
        ? deny(403, refused(url, error), true)
        : deny(502, `could not reach ${url.host}: ${error.message}`),
    );
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  };

  /** A tunnel (https, wss) or an upgraded connection (ws) to `url`'s host, opened through the policy. */
  const tunnel = (url: URL, client: Socket, head: Buffer, greeting: (upstream: Socket) => void) => {
    const fail = (status: string) => client.end(`HTTP/1.1 ${status}\r\n\r\n`);
    client.on('error', () => {});
    const lookup = lookupFor(url);
    if (lookup instanceof Error) {
      if (isRefusal(lookup)) refused(url, lookup);
      return fail('403 Forbidden');
    }
    const upstream = connect({ host: bare(url.hostname), port: Number(url.port), lookup });
    upstream.on('connect', () => {
      greeting(upstream);
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', (error) => {
      if (isRefusal(error)) refused(url, error);
      if (client.writable) fail(isRefusal(error) ? '403 Forbidden' : '502 Bad Gateway');
    });
    client.on('close', () => upstream.destroy());
  };

  const server = createServer(forward);
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    let url: URL;
    try {
      // `host:port`; the scheme only gives the port rules, and the port is always there.
      url = new URL(`https://${req.url ?? ''}`);
      if (!url.port) url.port = '443';
    } catch {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    tunnel(url, client, head, () => client.write('HTTP/1.1 200 Connection Established\r\n\r\n'));
  });
  server.on('upgrade', (req: IncomingMessage, client: Socket, head: Buffer) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
      if (url.protocol !== 'http:' && url.protocol !== 'ws:') throw new Error('not http');
      if (!url.port) url.port = '80';
    } catch {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    tunnel(url, client, head, (upstream) => {
      const headers = [];
      for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
        const name = req.rawHeaders[i] ?? '';
        if (!/^proxy-/i.test(name)) headers.push(`${name}: ${req.rawHeaders[i + 1] ?? ''}`);
      }
      upstream.write(`${req.method} ${url.pathname}${url.search} HTTP/1.1\r\n${headers.join('\r\n')}\r\n\r\n`);
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const { port } = server.address() as { port: number };
  return {
    server: `http://127.0.0.1:${port}`,
    refusalFor: log.refusalFor,
    close: () =>
      new Promise<void>((done) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/** Run in every frame before the page's own scripts, in route mode. */
const ROUTE_GUARD_SCRIPT = `for (const name of ['SharedWorker', 'RTCPeerConnection', 'webkitRTCPeerConnection', 'RTCDataChannel']) {
  try { delete globalThis[name]; } catch {}
}`;

/**
 * The weaker guard, for a browser this process cannot put its proxy in front of (one reached by
 * `cdp_url` or `wss_url`, or one behind a proxy of yours): each request's URL is checked before the
 * browser makes it, its name resolved here. It cannot see redirects (the browser follows them
 * itself) nor what the browser's own DNS lookup answers later. Pages get no SharedWorker or WebRTC.
 */
export async function routeGuard(
  context: BrowserContext,
  policy: NetworkPolicy,
  resolve?: Resolver,
): Promise<RefusalLog> {
  const log = refusalLog();
  const check = async (target: string): Promise<boolean> => {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      return false;
    }
    if (!['http:', 'https:', 'ws:', 'wss:'].includes(url.protocol))
      return url.protocol === 'data:' || url.protocol === 'blob:';
    const refusal = await addressRefusal(url, policy, resolve);
    if (refusal) log.record(url, refusal.message);
    return refusal === undefined;
  };
  // A shared worker's requests pass no route (Playwright does not see them): a page gets none.
  // WebRTC goes too: a browser reached by cdp_url or wss_url may not have been started with the
  // switch that keeps its UDP behind the proxy.
  await context.addInitScript(ROUTE_GUARD_SCRIPT);
  await context.route('**/*', async (route) =>
    (await check(route.request().url())) ? route.fallback() : route.abort('blockedbyclient'),
  );
  await context.routeWebSocket(/.*/, async (socket) => {
    if (await check(socket.url())) socket.connectToServer();
    else await socket.close({ code: 1008, reason: 'refused by the network policy' });
  });
  return { refusalFor: log.refusalFor };
}
