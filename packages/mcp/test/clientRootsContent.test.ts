// Our client against the SDK's own McpServer, in-process over streamable HTTP on 127.0.0.1: the
// roots it answers (and the list_changed it sends when the host changes them), a server's log lines
// outside any call, a sampling request no call can take, and result parts the model only reads about
// (audio, embedded files, links) kept for re-serving.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { RootsListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createMcpClient, type McpClient, type McpClientOptions } from '../src/client/mcpClient.js';
import type { McpLogEntry } from '../src/client/serverRequests.js';
import { createMcpServer, type McpToolServer } from '../src/server/mcpServer.js';
import { block, callTool, connectClient, fromServer, observe, tempWorkspace, toolNamed } from './helpers.js';

const AUDIO = Buffer.from('RIFF....WAVE').toString('base64');
const MEDIA = [
  { type: 'text' as const, text: 'Here is the recording.' },
  { type: 'audio' as const, data: AUDIO, mimeType: 'audio/wav' },
  { type: 'resource' as const, resource: { uri: 'file:///notes.txt', mimeType: 'text/plain', text: 'A note.' } },
  {
    type: 'resource_link' as const,
    uri: 'file:///big.csv',
    name: 'big.csv',
    mimeType: 'text/csv',
    description: 'All rows',
  },
];

let http: Server | undefined;
let client: McpClient | undefined;
let reserver: McpToolServer | undefined;
afterEach(async () => {
  await client?.close();
  await reserver?.close();
  http?.closeAllConnections();
  await new Promise((resolve) => (http ? http.close(resolve) : resolve(undefined)));
  client = undefined;
  reserver = undefined;
  http = undefined;
});

/** The SDK's McpServer with a few tools, over streamable HTTP (one session), and our client connected to it. */
async function connect(options: Omit<McpClientOptions, 'servers'> = {}) {
  const sdk = new McpServer({ name: 'sdk-server', version: '1.0.0' }, { capabilities: { logging: {} } });
  sdk.registerTool('roots', { description: 'Lists the client roots.' }, async () => ({
    content: [{ type: 'text', text: JSON.stringify((await sdk.server.listRoots()).roots) }],
  }));
  sdk.registerTool('media', { description: 'Gives a recording, a note and a link.' }, () => ({ content: MEDIA }));
  const rootsChanged: (() => void)[] = [];
  sdk.server.setNotificationHandler(RootsListChangedNotificationSchema, () => rootsChanged.shift()?.());
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => crypto.randomUUID() });
  await sdk.connect(transport);
  http = createServer((request, response) => void transport.handleRequest(request, response));
  await new Promise<void>((resolve) => http?.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  client = createMcpClient({ servers: { sdk: { type: 'http', url: `http://127.0.0.1:${port}/mcp` } }, ...options });
  await client.connect();
  const nextRootsChange = () => new Promise<void>((resolve) => rootsChanged.push(resolve));
  return { sdk, client, nextRootsChange };
}

describe('roots', () => {
  it('are none by default, the given directories as file:// URIs, and the server hears when they change', async () => {
    const workspace = await tempWorkspace();
    const { client: mcp, nextRootsChange } = await connect({ roots: [{ path: workspace, name: 'workspace' }] });
    const roots = toolNamed(mcp, 'mcp_sdk_roots');
    expect(JSON.parse(fromServer('sdk', (await observe(roots, {})).output))).toEqual([
      { uri: pathToFileURL(workspace).href, name: 'workspace' },
    ]);
    const changed = nextRootsChange();
    await mcp.setRoots([join(workspace, 'sub')]);
    await changed;
    expect(JSON.parse(fromServer('sdk', (await observe(roots, {})).output))).toEqual([
      { uri: pathToFileURL(join(workspace, 'sub')).href },
    ]);
  });

  it('are an empty list without the option', async () => {
    const { client: mcp } = await connect();
    expect((await observe(toolNamed(mcp, 'mcp_sdk_roots'), {})).output).toBe(block('sdk', '[]'));
  });
});

describe('requests and log lines outside any call', () => {
  it("go to the client's onLog, and a sampling request no call can take is refused with the reason", async () => {
    const lines: McpLogEntry[] = [];
    let heard: () => void = () => {};
    const logged = new Promise<void>((resolve) => (heard = resolve));
    const { sdk, client: mcp } = await connect({
      onLog: (entry) => {
        lines.push(entry);
        heard();
      },
    });
    await sdk.server.sendLoggingMessage({ level: 'notice', logger: 'cron', data: { job: 'nightly' } });
    await logged;
    expect(lines).toEqual([{ server: 'sdk', level: 'notice', logger: 'cron', data: { job: 'nightly' } }]);

    // Outside a run's call (no host approval to be had): the server is told why, and so is the model.
    await expect(
      sdk.server.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'Hi' } }], maxTokens: 5 }),
    ).rejects.toThrow(/none of our calls of its tools was in flight/);
    expect(mcp.status().sdk?.state).toBe('connected');
  });

  it("go to the client's onSampling when it has one", async () => {
    const { sdk } = await connect({
      onSampling: (request, context) => ({
        role: 'assistant',
        content: { type: 'text', text: `${context.server} got ${request.messages.length} message(s)` },
        model: 'host-model',
      }),
    });
    const answer = await sdk.server.createMessage({
      messages: [{ role: 'user', content: { type: 'text', text: 'Hi' } }],
      maxTokens: 5,
    });
    expect(answer).toMatchObject({ model: 'host-model', content: { type: 'text', text: 'sdk got 1 message(s)' } });
  });
});

describe('bounds on what a server asks', () => {
  it('refuses a sampling request of too many messages, and a form too large, before anyone is asked', async () => {
    const asked: string[] = [];
    const { sdk } = await connect({
      onSampling: () => {
        asked.push('sampling');
        return { role: 'assistant', content: { type: 'text', text: 'no' }, model: 'host-model' };
      },
      onElicitation: () => {
        asked.push('elicitation');
        return { action: 'cancel' };
      },
    });
    const message = { role: 'user' as const, content: { type: 'text' as const, text: 'Hi' } };
    await expect(
      sdk.server.createMessage({ messages: Array.from({ length: 101 }, () => message), maxTokens: 5 }),
    ).rejects.toThrow(/sampling request refused: it has more than 100 messages/);
    const properties = Object.fromEntries(
      Array.from({ length: 500 }, (_, i) => [`field${i}`, { type: 'string' as const, description: 'x'.repeat(200) }]),
    );
    await expect(
      sdk.server.elicitInput({ message: 'Fill this in', requestedSchema: { type: 'object', properties } }),
    ).rejects.toThrow(/the requested schema is too large/);
    expect(asked).toEqual([]);
  });
});

describe('result parts the model only reads about', () => {
  it('are kept as MCP content, described in the output, and passed on when our server serves the tool', async () => {
    const { client: mcp } = await connect();
    const media = toolNamed(mcp, 'mcp_sdk_media');
    const observed = await observe(media, {});
    expect(observed.output).toBe(
      block(
        'sdk',
        [
          'Here is the recording.',
          '[audio (audio/wav, 12 bytes) not shown]',
          '[resource file:///notes.txt (text/plain)]\nA note.',
          '[resource link: file:///big.csv "big.csv" (text/csv) — All rows]',
        ].join('\n'),
      ),
    );
    expect(observed.content).toEqual(MEDIA);

    // Re-served: another MCP client of our server gets the parts themselves.
    reserver = createMcpServer([media]);
    const [ours, theirs] = InMemoryTransport.createLinkedPair();
    await reserver.connect(ours);
    const sdkClient = await connectClient(theirs);
    try {
      expect((await callTool(sdkClient, 'mcp_sdk_media')).content).toEqual(MEDIA);
    } finally {
      await sdkClient.close();
    }
  });
});
