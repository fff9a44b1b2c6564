// The fixture site on 127.0.0.1: the pages in fixtures/site, plus a few answers made here (a
// 500-row page, a slow API, a download, a redirect, a 404).
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, normalize } from 'node:path';

const root = join(import.meta.dirname, 'fixtures', 'site');

export interface Site {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** `127.0.0.1:<port>`, for allowHosts. */
  readonly host: string;
  readonly port: number;
  /** The paths requested (`upgrade <path>` for a WebSocket handshake), in order. */
  readonly requests: readonly string[];
  close(): Promise<void>;
}

export type Route = (request: IncomingMessage, response: ServerResponse) => boolean | Promise<boolean>;

/** A server on 127.0.0.1 (a random port) answering with `route`, else a 404 page. */
export async function startServer(route: Route): Promise<Site> {
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(request.url ?? '/');
    Promise.resolve(route(request, response))
      .then((handled) => {
        if (!handled) {
          response
            .writeHead(404, { 'content-type': 'text/html; charset=utf-8' })
            .end('<!doctype html><title>Not Found</title><h1>Not found</h1><p>No such page.</p><a href="/">Home</a>');
        }
      })
      .catch((error: unknown) => response.writeHead(500).end(String(error)));
  });
  // WebSocket handshakes are recorded too, and refused.
  server.on('upgrade', (request, socket) => {
    requests.push(`upgrade ${request.url ?? '/'}`);
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const html = (response: ServerResponse, body: string, status = 200) =>
  response.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(body);

/** The fixture site's own answers, then its files. */
const siteRoute: Route = async (request, response) => {
  const url = new URL(request.url ?? '/', 'http://127.0.0.1');
  if (url.pathname === '/favicon.ico') {
    response.writeHead(204).end();
    return true;
  }
  if (url.pathname === '/api/slow') {
    await new Promise((resolve) => setTimeout(resolve, 300));
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"count":42}');
    return true;
  }
  if (url.pathname === '/download/report.csv') {
    response
      .writeHead(200, { 'content-type': 'text/csv', 'content-disposition': 'attachment; filename="report.csv"' })
      .end('region,sales\nKansai,1200\nKanto,3400\n');
    return true;
  }
  if (url.pathname === '/redirect') {
    response.writeHead(302, { location: url.searchParams.get('to') ?? '/' }).end();
    return true;
  }
  if (url.pathname === '/sw.js') {
    // A service worker that tries to reach the ?target= of its registration.
    response
      .writeHead(200, { 'content-type': 'text/javascript' })
      .end("fetch(new URL(location).searchParams.get('target') + '/service', { mode: 'no-cors' });");
    return true;
  }
  const path = normalize(url.pathname === '/' ? '/index.html' : url.pathname);
  if (!path.endsWith('.html') || path.includes('..')) return false;
  try {
    html(response, await readFile(join(root, path), 'utf8'));
    return true;
  } catch {
    return false;
  }
};

export const startSite = (): Promise<Site> => startServer(siteRoute);
