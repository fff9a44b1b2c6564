import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { OpenManusError, type Result } from '@openmanus/core';
import { afterEach } from 'vitest';
import type { EngineFetch, EngineQuery } from '../src/search/types.js';
import { httpRequest } from '../src/web/http.js';
import { ANY_ADDRESS } from '../src/web/networkPolicy.js';
import { WebFetchError } from '../src/web/webFetchError.js';

/** A request as the local server received it. */
export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

export interface WebServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly requests: readonly ReceivedRequest[];
  close(): Promise<void>;
}

export type Handler = (request: ReceivedRequest, response: ServerResponse) => void | Promise<void>;

/** A real HTTP server on 127.0.0.1 (a random port) answering with `handler`. */
export async function startWebServer(handler: Handler): Promise<WebServer> {
  const requests: ReceivedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const received = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(received);
      Promise.resolve(handler(received, res)).catch((error: unknown) => {
        res.writeHead(500).end(String(error));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * For a test file (called at its top): `serve` starts a server that is closed when the test that
 * started it ends; `hosts()` are the `host:port` of those running, for `allowHosts`.
 */
export function serversPerTest() {
  const servers: WebServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  return {
    serve: async (handler: Handler): Promise<WebServer> => {
      const server = await startWebServer(handler);
      servers.push(server);
      return server;
    },
    hosts: () => servers.map((server) => new URL(server.url).host),
  };
}

/** A recorded page from test/fixtures/search. */
export const fixture = (name: string): string =>
  readFileSync(join(import.meta.dirname, 'fixtures', 'search', name), 'utf8');

export const send =
  (body: string, contentType = 'text/html; charset=utf-8', status = 200): Handler =>
  (_request, response) => {
    response.writeHead(status, { 'content-type': contentType }).end(body);
  };

/** What an engine gets from the cascade (any address, as for the host's engines), for calling an engine on its own. */
export function engineQuery(overrides: Partial<Omit<EngineQuery, 'fetch'>> = {}): EngineQuery {
  const signal = overrides.signal ?? new AbortController().signal;
  const fetch: EngineFetch = (url, request = {}) =>
    httpRequest(url, request, { signal, timeoutMs: 600_000, maxBytes: 2 * 1024 * 1024, network: ANY_ADDRESS });
  return { numResults: 10, lang: 'en', country: 'us', ...overrides, signal, fetch };
}

/** What a failed page read says, as data: `fetchWebPage`'s `WebFetchError` (its code, message, status and the code of its cause). */
export function failureOf(result: Result<unknown, WebFetchError>) {
  if (result.isOk()) return 'read';
  const { code, message, status, cause } = result.error;
  return {
    fetchError: WebFetchError.isInstance(result.error),
    code,
    message,
    ...(status !== undefined ? { status } : {}),
    ...(OpenManusError.isInstance(cause) ? { cause: cause.code } : {}),
  };
}
