// The HTTP transport's defences, each probed with raw requests as a hostile page or process would send them.
import { rm } from 'node:fs/promises';
import { request } from 'node:http';
import { connect } from 'node:net';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HttpServeOptions, HttpServing } from '../src/server/http.js';
import { createMcpServer, type McpToolServer } from '../src/server/mcpServer.js';
import { testTools } from './fixtures/tools.mjs';
import { callTool, eventually, httpClient, tempWorkspace, textOf } from './helpers.js';

let server: McpToolServer;
let workspace: string;
beforeEach(async () => {
  workspace = await tempWorkspace();
  server = createMcpServer(testTools({ workspace, marker: '0' }));
});
afterEach(async () => {
  await server.close();
  await rm(workspace, { recursive: true, force: true });
});

const serve = (options: HttpServeOptions = {}) => server.serveHttp({ port: 0, ...options });

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
});

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** A POST of `body` to the server's endpoint with exactly these headers (Host included, which fetch cannot set). */
function post(serving: HttpServing, headers: Record<string, string>, body = initialize): Promise<Answer> {
  const url = new URL(serving.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: {
          host: url.host,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('serveHttp: who may talk to the server', () => {
  it('listens on 127.0.0.1 by default, with a fresh random token unless one is given', async () => {
    const first = await serve();
    const second = await serve();
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(first.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(second.token).not.toBe(first.token);
    expect((await serve({ token: 'correct horse battery staple' })).token).toBe('correct horse battery staple');
    await expect(serve({ token: '' })).rejects.toThrow('The bearer token is empty');
  });

  it('refuses every request without the token, before anything else happens', async () => {
    const serving = await serve();
    for (const headers of [
      {},
      bearer('guess'),
      bearer(`${serving.token}x`),
      { authorization: `Basic ${serving.token}` },
    ]) {
      const answer = await post(serving, headers);
      expect(answer.status, JSON.stringify(headers)).toBe(401);
      expect(answer.headers['www-authenticate']).toBe('Bearer realm="openmanus"');
      expect(JSON.parse(answer.body)).toMatchObject({ error: { message: expect.stringMatching(/^Unauthorized/) } });
    }
    // A session once opened is no pass: its later requests need the token as well.
    const opened = await post(serving, bearer(serving.token));
    expect(opened.status).toBe(200);
    const session = String(opened.headers['mcp-session-id']);
    const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    const unauthorised = await post(
      serving,
      { 'mcp-session-id': session, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION },
      list,
    );
    expect(unauthorised.status).toBe(401);
    await expect(httpClient(serving.url, 'guess')).rejects.toThrow(/401|Unauthorized/);
    const { client } = await httpClient(serving.url, serving.token);
    expect(textOf(await callTool(client, 'plan_trip', { mode: 'bus', stops: [{ city: 'Uji', nights: 1 }] }))).toBe(
      'By bus: Uji (1)',
    );
    await client.close();
  });

  it('refuses a Host header that is not this server’s (a name rebound to 127.0.0.1)', async () => {
    const serving = await serve();
    const { port } = new URL(serving.url);
    const rebound = await post(serving, { ...bearer(serving.token), host: `attacker.example:${port}` });
    expect(rebound.status).toBe(403);
    expect(rebound.body).toContain(`Invalid Host header: attacker.example:${port}`);
    expect(rebound.headers['mcp-session-id']).toBeUndefined();
    expect((await post(serving, { ...bearer(serving.token), host: `localhost:${port}` })).status).toBe(200);
    const proxied = await serve({ allowedHosts: ['mcp.internal:443'] });
    expect((await post(proxied, { ...bearer(proxied.token), host: 'mcp.internal:443' })).status).toBe(200);
  });

  it('refuses requests from web pages of other origins', async () => {
    const serving = await serve({ allowedOrigins: ['https://console.example'] });
    const { port } = new URL(serving.url);
    const foreign = await post(serving, { ...bearer(serving.token), origin: 'https://attacker.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toContain('Invalid Origin header: https://attacker.example');
    for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`, 'https://console.example']) {
      expect((await post(serving, { ...bearer(serving.token), origin })).status, origin).toBe(200);
    }
  });

  it('answers other paths with 404, naming the endpoint', async () => {
    const serving = await serve();
    const answer = await fetch(new URL('/sse', serving.url), { headers: bearer(serving.token) });
    expect(answer.status).toBe(404);
    expect(await answer.text()).toContain('the MCP endpoint is /mcp');
  });
});

/** Where a session's requests go: its id and protocol version with the token. */
const inSession = (serving: HttpServing, id: string) => ({
  ...bearer(serving.token),
  'mcp-session-id': id,
  'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
});
const listTools = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });

/** A new session by a raw initialize: its id, or the refusal. */
async function open(serving: HttpServing): Promise<Answer & { readonly id: string }> {
  const answer = await post(serving, bearer(serving.token));
  return { ...answer, id: String(answer.headers['mcp-session-id']) };
}

/** A session's standalone event stream, held open (a request in flight keeps its session busy). */
function holdStream(serving: HttpServing, id: string): Promise<{ readonly status: number; end(): void }> {
  const url = new URL(serving.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'GET',
        headers: { host: url.host, accept: 'text/event-stream', ...inSession(serving, id) },
      },
      (res) => resolve({ status: res.statusCode ?? 0, end: () => req.destroy() }),
    );
    req.on('error', () => {});
    req.once('error', reject);
    req.end();
  });
}

describe('serveHttp: what a client can make it hold', () => {
  it('caps the sessions: a new one ends the session idle longest, and is refused with 503 when all are busy', async () => {
    const serving = await serve({ maxSessions: 2 });
    const first = await open(serving);
    const second = await open(serving);
    const third = await open(serving);
    expect([first.status, second.status, third.status]).toEqual([200, 200, 200]);
    // The first was idle longest: it is gone; the others answer.
    expect((await post(serving, inSession(serving, first.id), listTools)).status).toBe(404);
    expect((await post(serving, inSession(serving, second.id), listTools)).status).toBe(200);
    expect((await post(serving, inSession(serving, third.id), listTools)).status).toBe(200);

    const streams = [await holdStream(serving, second.id), await holdStream(serving, third.id)];
    expect(streams.map((stream) => stream.status)).toEqual([200, 200]);
    const refused = await open(serving);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
    expect(JSON.parse(refused.body)).toEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Too many sessions: all 2 are busy; try again later' },
      id: null,
    });
    // Both busy sessions are untouched; once one is idle again, a new session takes its place.
    expect((await post(serving, inSession(serving, second.id), listTools)).status).toBe(200);
    for (const stream of streams) stream.end();
    await eventually(async () => (await open(serving)).status === 200);
  });

  it('initialize requests sent at once cannot pass the cap', async () => {
    const serving = await serve({ maxSessions: 2 });
    const opened = await Promise.all(Array.from({ length: 8 }, () => open(serving)));
    const live = [];
    for (const session of opened.filter((answer) => answer.status === 200)) {
      if ((await post(serving, inSession(serving, session.id), listTools)).status === 200) live.push(session.id);
    }
    expect(live.length).toBeGreaterThan(0);
    expect(live.length).toBeLessThanOrEqual(2);
    expect(opened.every((answer) => answer.status === 200 || answer.status === 503)).toBe(true);
  });

  it('refuses a bad cap', async () => {
    await expect(serve({ maxSessions: 0 })).rejects.toThrow('maxSessions must be a positive integer, got 0');
  });

  it('answers a request without the token with 401 and closes the connection, without reading its 105 MB body', async () => {
    const serving = await serve();
    const url = new URL(serving.url);
    const total = 105 * 1024 * 1024;
    const socket = connect(Number(url.port), url.hostname);
    let answer = '';
    socket.setEncoding('latin1').on('data', (chunk: string) => (answer += chunk));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => {});
    socket.write(
      `POST /mcp HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: application/json\r\ncontent-length: ${total}\r\n\r\n`,
    );
    // Sent as fast as the server takes it: a server that reads the body takes all of it.
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    let written = 0;
    while (written < total && !socket.destroyed) {
      written += chunk.length;
      if (!socket.write(chunk)) {
        await Promise.race([new Promise((resolve) => socket.once('drain', resolve)), closed]);
      }
    }
    socket.destroy();
    await closed;
    expect(written).toBeLessThan(total / 2);
    expect(answer).toMatch(/^HTTP\/1\.1 401 Unauthorized\r\n/);
    expect(answer.toLowerCase()).toContain('connection: close');
  });
});
