// Servers that misbehave, as real processes (over stdio, or HTTP on 127.0.0.1), and what the client
// must do about each at once, never at a call's time limit: no listener left on a long-lived signal,
// a tool added by a call offered in the very next request, a server killed mid-call, gone while idle,
// or closing its stdout noticed at once, a schema nested 5,000 deep left out, a 100 MB result cut at
// the cap while it streams — and no unhandled rejection anywhere.
import { type ChildProcess, spawn } from 'node:child_process';
import { getEventListeners, once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createAgent, run, terminate } from '@openmanus/core';
import { processesMatching, scriptedLlm } from '@openmanus/core/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { withMcp } from '../src/agents/withMcp.js';
import { MAX_MESSAGE_BYTES } from '../src/client/boundedFetch.js';
import type { McpServers } from '../src/client/config.js';
import { createMcpClient, type McpClient, type McpClientOptions } from '../src/client/mcpClient.js';
import { block, fixtureServer, newMarker, nextEvent, observe, toolNamed } from './helpers.js';

const fixtures = join(import.meta.dirname, 'fixtures');
const broken = join(fixtures, 'brokenServer.mjs');
const hostile = join(fixtures, 'hostileServer.mjs');
const fixture = join(fixtures, 'fixtureServer.mjs');
const tag = newMarker();
/** A safety net for the tests that prove something happens at once: far below the calls' time limit. */
const AT_ONCE = { timeout: 30_000 };
const NEVER_MS = 600_000;

// Every rejection nobody handled, in any test of this file: there must be none.
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeAll(() => {
  process.on('unhandledRejection', onUnhandled);
});
afterAll(async () => {
  // A rejection is reported as unhandled once the microtasks have run: let them.
  await new Promise((resolve) => setImmediate(resolve));
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
  expect(processesMatching(tag)).toEqual([]);
});

/** A server process, its stdout read line by line as JSON. */
interface Spawned {
  readonly child: ChildProcess;
  /** Settles with the first line (from now on) that `matches`. */
  line(matches: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  kill(): Promise<void>;
}

const spawned = new Set<Spawned>();
const clients = new Set<McpClient>();
afterEach(async () => {
  await Promise.all([...clients].map((client) => client.close()));
  clients.clear();
  await Promise.all([...spawned].map((server) => server.kill()));
  spawned.clear();
});

function start(script: string, ...args: string[]): Spawned {
  const child = spawn(process.execPath, [script, ...args, '--tag', tag], { stdio: ['ignore', 'pipe', 'inherit'] });
  const waiting = new Set<{ matches: (line: Record<string, unknown>) => boolean; resolve: (line: never) => void }>();
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (text) => {
    const line = JSON.parse(text) as Record<string, unknown>;
    for (const waiter of waiting) {
      if (!waiter.matches(line)) continue;
      waiting.delete(waiter);
      waiter.resolve(line as never);
    }
  });
  const exited = once(child, 'exit');
  const server: Spawned = {
    child,
    line: (matches) => new Promise((resolve) => waiting.add({ matches, resolve })),
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
  spawned.add(server);
  return server;
}

/** An HTTP server process: its /mcp url once it listens. */
async function startHttp(script: string, ...args: string[]): Promise<Spawned & { url: string }> {
  const server = start(script, '--http', ...args);
  const { port } = await server.line((line) => 'port' in line);
  return { ...server, url: `http://127.0.0.1:${port}/mcp` };
}

async function connected(servers: McpServers, options: Partial<McpClientOptions> = {}): Promise<McpClient> {
  const client = createMcpClient({ servers, reconnect: { initialDelayMs: 20, maxDelayMs: 100 }, ...options });
  clients.add(client);
  await client.connect();
  return client;
}

const stdio = (script: string, ...args: string[]) => ({
  command: process.execPath,
  args: [script, ...args, '--tag', tag],
});

describe('listeners', () => {
  it('listing tools and calling them again and again leaves no listener behind on a long-lived signal', async () => {
    const added = vi.spyOn(EventTarget.prototype, 'addEventListener');
    try {
      const client = await connected({ fixture: fixtureServer('fixture', tag) });
      const host = new AbortController(); // a host that gives every call the signal of its session
      for (let round = 0; round < 20; round++) {
        await client.refresh();
        await observe(toolNamed(client, 'mcp_fixture_echo'), { text: String(round) }, host.signal);
      }
      const signals = new Set(added.mock.contexts.filter((target) => target instanceof AbortSignal));
      const most = Math.max(...[...signals].map((signal) => getEventListeners(signal, 'abort').length));
      // Node warns of a leak at 11 (MaxListenersExceededWarning); 40 requests must not add up.
      expect(most).toBeLessThanOrEqual(2);
    } finally {
      added.mockRestore();
    }
  });
});

describe('tools that change', () => {
  it('over streamable HTTP, a tool a call adds is offered in the very next request (the server declares tools.listChanged, its notification comes late or never)', async () => {
    // --quiet: the server never sends list_changed, the latest a notification can come.
    const server = await startHttp(fixture, '--id', 'web', '--quiet');
    const client = await connected({ web: { type: 'http', url: server.url } });
    const llm = scriptedLlm([
      { toolCalls: [{ name: 'mcp_web_add_tool', arguments: { name: 'late' } }] },
      { toolCalls: [{ name: 'mcp_web_late', arguments: {} }] },
      { toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
    ]);
    const agent = withMcp(createAgent({ name: 'host', tools: [terminate] }), client);
    const result = await run(agent, 'Add a tool and call it.', { llm });
    expect(llm.requests[1]?.tools.map((tool) => tool.name)).toContain('mcp_web_late');
    expect(result.state.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toContain(
      block('web', 'i am late'),
    );
  });
});

describe('a server that goes away', () => {
  it.each([
    ['an event stream', ['--sse']],
    ['JSON', []],
  ])(
    'an HTTP server killed mid-call (answering with %s) fails the call at once, not at its time limit',
    async (_answer, args) => {
      const server = await startHttp(broken, ...args);
      const client = await connected({ broken: { type: 'http', url: server.url } }, { callTimeoutMs: NEVER_MS });
      const hanging = server.line((line) => line.event === 'hanging');
      const called = observe(toolNamed(client, 'mcp_broken_hang'), {});
      await hanging;
      await server.kill();
      const { isError, output } = await called;
      expect(isError).toBe(true);
      expect(output).toMatch(/^Error: the MCP server "broken" was lost during the call: /);
      expect(client.status().broken?.state).toBe('reconnecting');
    },
    AT_ONCE.timeout,
  );

  it(
    'an SSE server killed mid-call (its answers come on its one event stream) fails the call at once',
    async () => {
      const server = await startHttp(broken);
      const url = server.url.replace(/\/mcp$/, '/sse');
      const client = await connected({ broken: { type: 'sse', url } }, { callTimeoutMs: NEVER_MS });
      const hanging = server.line((line) => line.event === 'hanging');
      const called = observe(toolNamed(client, 'mcp_broken_hang'), {});
      await hanging;
      await server.kill();
      const { isError, output } = await called;
      expect(isError).toBe(true);
      expect(output).toMatch(/^Error: the MCP server "broken" was lost during the call: /);
    },
    AT_ONCE.timeout,
  );

  it(
    'an idle HTTP server whose event stream breaks (it died) is marked disconnected at once, its tools withdrawn',
    async () => {
      const server = await startHttp(fixture, '--id', 'web');
      const client = await connected({ web: { type: 'http', url: server.url } });
      const echo = toolNamed(client, 'mcp_web_echo');
      const disconnected = nextEvent(client, (event) => event.type === 'disconnected');
      await server.kill();
      // The ping meets the port closed, or the dying process resetting it: either way it is gone.
      expect(await disconnected).toMatchObject({
        server: 'web',
        error: expect.stringMatching(
          /^a stream broke \(.*\), and it did not answer a ping: fetch failed \((ECONNREFUSED|ECONNRESET)\)$/,
        ),
      });
      expect(client.status().web).toMatchObject({ state: 'reconnecting', tools: [] });
      expect(client.tools()).toEqual([]);
      expect((await observe(echo, { text: 'hi' })).output).toMatch(/^Error: the MCP server "web" is not connected/);
    },
    AT_ONCE.timeout,
  );

  it(
    'an idle HTTP server without an event stream that died is pinged before its tools are offered again, and found gone',
    async () => {
      const server = await startHttp(broken);
      // idleCheckMs 0: every step finds the server idle, so the test waits for no clock.
      const client = await connected({ broken: { type: 'http', url: server.url } }, { idleCheckMs: 0 });
      expect(client.status().broken?.tools).toContain('mcp_broken_echo');
      await server.kill();
      const llm = scriptedLlm([{ toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] }]);
      await run(withMcp(createAgent({ name: 'host', tools: [terminate] }), client), 'Echo hi.', { llm });
      expect(llm.requests[0]?.tools.map((tool) => tool.name)).toEqual(['terminate']);
      expect(client.status().broken?.state).toBe('reconnecting');
    },
    AT_ONCE.timeout,
  );

  it(
    'a stdio server that closes its stdout (and lives on) fails the call at once and is restarted',
    async () => {
      const client = await connected({ broken: stdio(broken) }, { callTimeoutMs: NEVER_MS });
      const reconnected = nextEvent(client, (event) => event.type === 'connected');
      const { isError, output } = await observe(toolNamed(client, 'mcp_broken_close_stdout'), {});
      expect(isError).toBe(true);
      expect(output).toMatch(/^Error: the MCP server "broken" was lost during the call: /);
      await reconnected;
      expect((await observe(toolNamed(client, 'mcp_broken_echo'), { text: 'back' })).output).toBe(
        block('broken', 'echo: back'),
      );
    },
    AT_ONCE.timeout,
  );
});

describe('a hostile server', () => {
  it.each([
    ['stdio', async () => stdio(hostile, '--tools', 'echo,deep_schema')],
    [
      'streamable HTTP',
      async () => ({ type: 'http', url: (await startHttp(hostile, '--tools', 'echo,deep_schema')).url }) as const,
    ],
  ])(
    'over %s, a tool whose schema is 5,000 deep (185 kB) is left out with a note, listing after listing; the rest works and nothing throws later',
    async (_transport, config) => {
      const client = await connected({ hostile: await config() });
      const llm = scriptedLlm([
        { toolCalls: [{ name: 'mcp_hostile_echo', arguments: { text: 'one' } }] },
        { toolCalls: [{ name: 'mcp_hostile_echo', arguments: { text: 'two' } }] },
        { toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
      ]);
      const agent = withMcp(createAgent({ name: 'host', tools: [terminate] }), client, { refreshEvery: 1 });
      const result = await run(agent, 'Echo twice.', { llm });
      expect(result.state.status).toBe('finished');
      for (const request of llm.requests) {
        expect(request.tools.map((tool) => tool.name)).toEqual(['terminate', 'mcp_hostile_echo']);
      }
      expect(String(llm.requests[0]?.messages.at(-1)?.content)).toContain(
        '"deep_schema" (its input schema is nested more than 64 levels deep)',
      );
      expect(result.state.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([
        block('hostile', 'echo: one'),
        block('hostile', 'echo: two'),
        'The interaction has been completed with status: success',
      ]);
      await client.refresh();
      expect(client.status().hostile).toMatchObject({
        state: 'connected',
        leftOut: [{ tool: 'deep_schema', reason: 'its input schema is nested more than 64 levels deep' }],
      });
    },
  );

  it.each([
    ['JSON', []],
    ['an event stream', ['--sse']],
  ])(
    'a result of 100 MB over HTTP (as %s) is read only up to the cap on a message, then cut off with a clear error',
    async (_answer, args) => {
      const server = await startHttp(broken, ...args);
      const client = await connected({ broken: { type: 'http', url: server.url } });
      const flooded = server.line((line) => line.event === 'flood');
      const reconnected = nextEvent(client, (event) => event.type === 'connected');
      const { isError, output } = await observe(toolNamed(client, 'mcp_broken_flood'), {});
      expect(isError).toBe(true);
      expect(output).toContain('the server sent a message of more than 10 MB');
      const { finished, bytes } = await flooded;
      expect(finished).toBe(false);
      // What the server wrote before the client stopped reading: the cap and what sockets buffer.
      expect(bytes).toBeLessThan(MAX_MESSAGE_BYTES * 3);
      await reconnected;
      expect((await observe(toolNamed(client, 'mcp_broken_echo'), { text: 'after' })).output).toBe(
        block('broken', 'echo: after'),
      );
    },
  );

  it.each([
    ['stdio', async () => stdio(hostile)],
    ['streamable HTTP', async () => ({ type: 'http', url: (await startHttp(hostile)).url }) as const],
  ])('over %s, every hostile tool called leaves no unhandled rejection', async (_transport, config) => {
    const client = await connected({ hostile: await config() });
    for (const tool of client.tools()) {
      const reconnected =
        tool.spec.name === 'mcp_hostile_flood' ? nextEvent(client, (e) => e.type === 'connected') : undefined;
      await observe(tool, {});
      await reconnected;
    }
    await client.refresh();
    await client.close();
    await new Promise((resolve) => setImmediate(resolve));
    expect(unhandled).toEqual([]);
  });
});
