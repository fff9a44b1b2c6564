// A tool's log lines and progress reach the MCP client that called it: notifications/message at or
// above the level the session set, notifications/progress with the request's progress token, each
// on the call's own stream and before its result. The official SDK client, in memory and over HTTP.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  type LoggingMessageNotification,
  LoggingMessageNotificationSchema,
  McpError,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { defineTool, type Tool } from '@openmanus/core';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { HttpServing } from '../src/server/http.js';
import { createMcpServer, type McpToolServer } from '../src/server/mcpServer.js';
import { callTool, httpClient, textOf } from './helpers.js';

const tools: Tool[] = [
  defineTool({
    name: 'import_rows',
    description: 'Imports rows, saying how far it got and what it saw.',
    parameters: z.object({}),
    execute: (_, scope) => {
      scope.log('debug', 'opened rows.csv', 'importer');
      scope.reportProgress({ progress: 1, total: 3, message: 'row 1' });
      scope.log('info', { rows: 3 }, 'importer');
      scope.reportProgress({ progress: 2, total: 3, message: 'row 2' });
      // Not a rise: MCP wants each report above the last, so this one is not sent.
      scope.reportProgress({ progress: 2, total: 3, message: 'row 2 again' });
      scope.log('warning', 'row 3 has no date');
      scope.reportProgress({ progress: 3, total: 3 });
      scope.log('error', 'row 4 is missing');
      // A child run's line (a sub-agent's tool) stays in the run.
      scope.emit({ type: 'log', effectId: 'inner-1', tool: 'inner', level: 'emergency', data: 'from a child' });
      return 'Imported 3 rows.';
    },
  }),
];

type Line = LoggingMessageNotification['params'];
const EVERY_LINE: Line[] = [
  { level: 'debug', logger: 'importer', data: 'opened rows.csv' },
  { level: 'info', logger: 'importer', data: { rows: 3 } },
  { level: 'warning', data: 'row 3 has no date' },
  { level: 'error', data: 'row 4 is missing' },
];

let server: McpToolServer | undefined;
const clients: Client[] = [];
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((client) => client.close()));
  await server?.close();
  server = undefined;
});

/** A client in memory that keeps the log lines it is sent. */
async function connect() {
  server ??= createMcpServer(tools);
  const [ours, theirs] = InMemoryTransport.createLinkedPair();
  await server.connect(ours);
  const client = new Client({ name: 'notifications-test', version: '1.0.0' });
  clients.push(client);
  const lines: Line[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, ({ params }) => {
    lines.push(params);
  });
  await client.connect(theirs);
  return { client, lines };
}

describe('log lines', () => {
  it('declares logging, and sends every line of a call until the client sets a level', async () => {
    const { client, lines } = await connect();
    expect(client.getServerCapabilities()?.logging).toEqual({});
    expect(textOf(await callTool(client, 'import_rows'))).toBe('Imported 3 rows.');
    // Here already: the lines go out before the call's result.
    expect(lines).toEqual(EVERY_LINE);
  });

  it('sends the lines at or above the level a session set, and that session only', async () => {
    const strict = await connect();
    const chatty = await connect();
    expect(await strict.client.setLoggingLevel('warning')).toEqual({});
    await callTool(strict.client, 'import_rows');
    await callTool(chatty.client, 'import_rows');
    expect(strict.lines.map((line) => line.level)).toEqual(['warning', 'error']);
    expect(chatty.lines).toEqual(EVERY_LINE);

    await strict.client.setLoggingLevel('debug');
    await callTool(strict.client, 'import_rows');
    expect(strict.lines.slice(2)).toEqual(EVERY_LINE);
  });

  it('refuses a level MCP does not have', async () => {
    const { client } = await connect();
    const refused = await client
      .request({ method: 'logging/setLevel', params: { level: 'verbose' } }, z.object({}))
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(McpError);
  });
});

describe('progress', () => {
  it("sends a call's rising progress with the request's progress token, before its result", async () => {
    const { client } = await connect();
    const reports: Progress[] = [];
    await client.callTool({ name: 'import_rows', arguments: {} }, undefined, {
      onprogress: (progress) => reports.push(progress),
    });
    expect(reports).toEqual([
      { progress: 1, total: 3, message: 'row 1' },
      { progress: 2, total: 3, message: 'row 2' },
      { progress: 3, total: 3 },
    ]);
  });
});

describe('over streamable HTTP', () => {
  let serving: HttpServing;

  /** A call POSTed by hand on the SDK client's session: every SSE message of its response stream. */
  async function rawCall(transport: StreamableHTTPClientTransport, progressToken?: string) {
    const response = await fetch(serving.url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${serving.token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': transport.sessionId ?? '',
        'mcp-protocol-version': transport.protocolVersion ?? '',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'import_rows', arguments: {}, ...(progressToken ? { _meta: { progressToken } } : {}) },
      }),
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    // The stream ends with the call's result.
    return (await response.text())
      .split('\n')
      .filter((line) => line.startsWith('data: ') && line.length > 'data: '.length)
      .map((line) => JSON.parse(line.slice('data: '.length)) as { method?: string; id?: number; params?: unknown });
  }

  it("sends a call's log lines and progress on the call's own stream, and no progress without a token", async () => {
    server = createMcpServer(tools);
    serving = await server.serveHttp({ port: 0 });
    const { client, transport } = await httpClient(serving.url, serving.token);
    clients.push(client);

    const plain = await rawCall(transport);
    expect(plain.map((message) => message.method ?? `result ${message.id}`)).toEqual([
      ...EVERY_LINE.map(() => 'notifications/message'),
      'result 7',
    ]);
    expect(plain.slice(0, 4).map((message) => message.params)).toEqual(EVERY_LINE);

    const tracked = await rawCall(transport, 'import-1');
    const progress = tracked.filter((message) => message.method === 'notifications/progress');
    expect(progress.map((message) => message.params)).toEqual([
      { progressToken: 'import-1', progress: 1, total: 3, message: 'row 1' },
      { progressToken: 'import-1', progress: 2, total: 3, message: 'row 2' },
      { progressToken: 'import-1', progress: 3, total: 3 },
    ]);
    expect(tracked.at(-1)?.id).toBe(7);
  });
});
