// Our client against our fixture server over HTTP (a real process on 127.0.0.1): streamable HTTP,
// SSE, the fallback from one to the other, headers, and a server that dies and comes back.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { processesMatching } from '@openmanus/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpServers } from '../src/client/config.js';
import { createMcpClient, type McpClient } from '../src/client/mcpClient.js';
import { block, fixtureServer, newMarker, nextEvent, observe, toolNamed } from './helpers.js';

const tag = newMarker();
let server: ChildProcess;
let port = 0;

/** Starts the fixture's HTTP server (on `port`, or a free one) and waits for its port. */
async function startServer(): Promise<void> {
  const { command, args = [] } = fixtureServer('remote', tag, '--http', '--port', String(port));
  server = spawn(command, [...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(createInterface({ input: server.stdout as NodeJS.ReadableStream }), 'line')) as [string];
  port = (JSON.parse(line) as { port: number }).port;
}

async function stopServer(): Promise<void> {
  if (server.exitCode !== null || server.signalCode !== null) return;
  const exited = once(server, 'exit');
  server.kill('SIGKILL');
  await exited;
}

beforeAll(startServer);
afterAll(async () => {
  await stopServer();
  expect(processesMatching(tag)).toEqual([]);
});

/** A client of `servers`, connected; closed after the test. */
async function connected(servers: McpServers, use: (client: McpClient) => Promise<void>): Promise<void> {
  const client = createMcpClient({ servers, reconnect: { initialDelayMs: 20, maxDelayMs: 100 } });
  try {
    await client.connect();
    await use(client);
  } finally {
    await client.close();
  }
}

describe('a server over HTTP', () => {
  it('streamable HTTP: calls tools, sends the configured headers, and follows list_changed', async () => {
    const url = `http://127.0.0.1:${port}/mcp`;
    await connected({ web: { type: 'http', url, headers: { 'x-team': 'blue' } } }, async (client) => {
      expect(client.status().web).toMatchObject({ state: 'connected', transport: 'http' });
      expect((await observe(toolNamed(client, 'mcp_web_echo'), { text: 'over http' })).output).toBe(
        block('web', 'remote echo: over http'),
      );
      expect((await observe(toolNamed(client, 'mcp_web_header'), { name: 'x-team' })).output).toBe(
        block('web', 'blue'),
      );
      const changed = nextEvent(client, (e) => e.type === 'toolsChanged');
      await observe(toolNamed(client, 'mcp_web_add_tool'), { name: 'late' });
      await changed;
      expect((await observe(toolNamed(client, 'mcp_web_late'), {})).output).toBe(block('web', 'i am late'));
    });
  });

  it('SSE: calls tools and sends the configured headers', async () => {
    const url = `http://127.0.0.1:${port}/sse`;
    await connected({ legacy: { type: 'sse', url, headers: { 'x-team': 'green' } } }, async (client) => {
      expect(client.status().legacy).toMatchObject({ state: 'connected', transport: 'sse' });
      expect((await observe(toolNamed(client, 'mcp_legacy_echo'), { text: 'over sse' })).output).toBe(
        block('legacy', 'remote echo: over sse'),
      );
      expect((await observe(toolNamed(client, 'mcp_legacy_header'), { name: 'x-team' })).output).toBe(
        block('legacy', 'green'),
      );
    });
  });

  it('a url without a type: streamable HTTP where it works, else SSE', async () => {
    const servers = { modern: { url: `http://127.0.0.1:${port}/mcp` }, old: { url: `http://127.0.0.1:${port}/sse` } };
    await connected(servers, async (client) => {
      expect(client.status().modern?.transport).toBe('http');
      expect(client.status().old?.transport).toBe('sse');
      expect((await observe(toolNamed(client, 'mcp_old_echo'), { text: 'fallback' })).output).toBe(
        block('old', 'remote echo: fallback'),
      );
    });
  });

  it('a server that dies: the call says so, its tools are withdrawn, and it is reconnected once it is back', async () => {
    await connected({ web: { type: 'http', url: `http://127.0.0.1:${port}/mcp` } }, async (client) => {
      const echo = toolNamed(client, 'mcp_web_echo');
      const disconnected = nextEvent(client, (e) => e.type === 'disconnected');
      await stopServer();
      const seen = await observe(echo, { text: 'anyone?' });
      expect(seen.isError).toBe(true);
      // Its death is noticed at once (its event stream breaks, a ping fails) or by the call, whichever is first.
      expect(seen.output).toMatch(
        /^Error: the MCP server "web" (was lost during the call|is not connected).*ECONNREFUSED/,
      );
      await disconnected;
      expect(client.tools()).toEqual([]);
      expect((await observe(echo, { text: 'still?' })).output).toMatch(
        /^Error: the MCP server "web" is not connected \(/,
      );

      const back = nextEvent(client, (e) => e.type === 'connected');
      await startServer();
      await back;
      expect((await observe(toolNamed(client, 'mcp_web_echo'), { text: 'back' })).output).toBe(
        block('web', 'remote echo: back'),
      );
    });
  });
});
