import { mkdtemp, realpath } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createResourcePool, errAsync, type RunScope, type Tool } from '@openmanus/core';
import { executeTool, type ToolEvent } from '@openmanus/core/internal';
import type { StdioServerConfig } from '../src/client/config.js';
import type { McpClient, McpClientEvent } from '../src/client/mcpClient.js';

/** A fresh directory, by its real path. */
export const tempWorkspace = async () => realpath(await mkdtemp(join(tmpdir(), 'openmanus-mcp-test-')));

/** Digits no other process has in its command line: `sleep 1000.<marker>` finds exactly a test's helpers. */
export const newMarker = () => String(Math.floor(Math.random() * 1e9) + 1e9);

/** Resolves once `check` holds, for what only shows in /proc or on disk (the limit: a backstop for a hang). */
export async function eventually(check: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('the condition did not hold in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The official SDK client, connected over `transport`. */
export async function connectClient(transport: Transport): Promise<Client> {
  const client = new Client({ name: 'openmanus-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** An SDK client over streamable HTTP, sending `token` as the bearer token. */
export async function httpClient(url: string, token: string) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  return { client: await connectClient(transport), transport };
}

/** Calls a tool and gives its result as MCP content (a client's `callTool`, typed). */
export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}) {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The text of a tool result's text content. */
export const textOf = (result: CallToolResult) =>
  result.content.map((item) => (item.type === 'text' ? item.text : `[${item.type}]`)).join('\n');

// The client's tests: servers to connect, and what the model sees of a call.

/** A completed call as core reports it. */
export type Observed = Extract<ToolEvent, { type: 'toolCompleted' }>;

export const packageDir = join(import.meta.dirname, '..');
const fixture = join(import.meta.dirname, 'fixtures', 'fixtureServer.mjs');
export const everythingScript = join(packageDir, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
export const filesystemScript = join(packageDir, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');

/** Our fixture server as a stdio server, its command line tagged (see fixtures/fixtureServer.mjs for its options). */
export const fixtureServer = (id: string, tag: string, ...options: string[]): StdioServerConfig => ({
  command: process.execPath,
  args: [fixture, '--id', id, '--tag', tag, ...options],
});

/** Settles with the first event of the client that `matches`. */
export function nextEvent(client: McpClient, matches: (event: McpClientEvent) => boolean): Promise<McpClientEvent> {
  return new Promise((resolve) => {
    const stop = client.subscribe((event) => {
      if (!matches(event)) return;
      stop();
      resolve(event);
    });
  });
}

/** The tool of `client` with this name (it must be there). */
export function toolNamed(client: McpClient, name: string): Tool {
  const tool = client.tools().find((t) => t.spec.name === name);
  if (!tool)
    throw new Error(
      `no tool ${name}; the client has ${client
        .tools()
        .map((t) => t.spec.name)
        .join(', ')}`,
    );
  return tool;
}

/** What the model sees of a call: core runs the tool as in a run (errors and limits included). */
export async function observe(
  tool: Tool,
  args: unknown,
  signal: AbortSignal = new AbortController().signal,
): Promise<Observed> {
  const pool = createResourcePool();
  const scope: RunScope = {
    runId: 'test',
    signal,
    llm: { model: 'none', complete: () => errAsync({ kind: 'config', message: 'no model' }) },
    resource: (key, open, close) => pool.get(key, open, close),
    emit: () => {},
    changeTools: async () => {},
  };
  try {
    const call = { id: 'c1', name: tool.spec.name, arguments: JSON.stringify(args) };
    const { timeoutMs } = tool.spec;
    const effect = {
      type: 'callTool',
      id: 'c1',
      call,
      args,
      parallelSafe: false,
      ...(timeoutMs ? { timeoutMs } : {}),
    } as const;
    const event = await executeTool(effect, tool, scope);
    if (event.type !== 'toolCompleted') throw new Error(`${tool.spec.name} suspended`);
    return event;
  } finally {
    await pool.close();
  }
}

/** `text` of `server` as the model reads it: in the block marked untrusted (see untrustedResults.test.ts). */
export const block = (server: string, text: string) =>
  `<mcp_content server="${server}" untrusted="true">\n${text}\n</mcp_content>`;

/** The text `server` said, out of its block; throws unless `output` is exactly one such block. */
export function fromServer(server: string, output: string): string {
  const [open, close] = block(server, '\0').split('\0') as [string, string];
  if (!output.startsWith(open) || !output.endsWith(close))
    throw new Error(`not a block of the MCP server "${server}": ${output.slice(0, 200)}`);
  return output.slice(open.length, -close.length);
}

/** The SDK's own McpServer over streamable HTTP on 127.0.0.1 (a free port): its URL, and how to stop it. */
export async function serveSdkOverHttp(sdk: McpServer): Promise<{ url: string; close(): Promise<void> }> {
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => crypto.randomUUID() });
  await sdk.connect(transport);
  const http = createServer((request, response) => void transport.handleRequest(request, response));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}
