import { mkdtemp, realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** A fresh directory, by its real path. */
export const tempWorkspace = async () => realpath(await mkdtemp(join(tmpdir(), 'openmanus-mcp-test-')));

/** Digits no other process has in its command line: `sleep 1000.<marker>` finds exactly a test's helpers. */
export const newMarker = () => String(Math.floor(Math.random() * 1e9) + 1e9);

/** Resolves once `check` holds, for what only shows in /proc or on disk. */
export async function eventually(check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
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
