import { type ChildProcess, spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { dist } from './helpers.js';

/** The official SDK client, connected over `transport`. */
export async function connectClient(transport: Transport): Promise<Client> {
  const client = new Client({ name: 'openmanus-cli-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** An SDK client over streamable HTTP with `token` as the bearer token. */
export async function httpClient(url: string, token: string) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  return { client: await connectClient(transport), transport };
}

/** A tool call's result, typed as MCP content. */
export const callTool = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;

export const textOf = (result: CallToolResult) =>
  result.content.map((item) => (item.type === 'text' ? item.text : `[${item.type}]`)).join('\n');

/** `sleep 1000.<digits>`: a command line only the test that made it runs. */
export const sleeper = () => `sleep 1000.${Math.floor(Math.random() * 1e9) + 1e9}`;

/** What `openmanus mcp-server --transport http` printed when it was ready. */
export interface ServerAnnouncement {
  readonly url: string;
  /** The generated token, when it printed one. */
  readonly token: string | undefined;
  /** Everything it has written to stderr so far. */
  readonly stderr: () => string;
}

/** Collects what a server writes to `stream`; resolves once its "Ctrl+C stops it." line is there. */
export function announcement(stream: NodeJS.ReadableStream): Promise<ServerAnnouncement> {
  return new Promise((resolve, reject) => {
    let text = '';
    let announced = false;
    stream.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (announced || !text.includes('Ctrl+C stops it.\n')) return;
      announced = true;
      const url = /url: +(\S+)/.exec(text)?.[1];
      if (!url) return reject(new Error(`no url in: ${text}`));
      resolve({ url, token: /token: +([A-Za-z0-9_-]{43}) /.exec(text)?.[1], stderr: () => text });
    });
    stream.once('end', () => reject(new Error(`the server ended before it was ready: ${text}`)));
  });
}

/** The built CLI as `openmanus mcp-server --transport http --port 0 …`, ready to be connected to. */
export async function startHttpServer(args: string[], env: Record<string, string> = {}) {
  const child: ChildProcess = spawn(
    process.execPath,
    [dist('cli.js'), 'mcp-server', '--transport', 'http', '--port', '0', ...args],
    {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  if (!child.stderr) throw new Error('no stderr');
  return { child, exited, ...(await announcement(child.stderr)) };
}
