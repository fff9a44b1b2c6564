// withMcp's default roots: with no `roots` given, a server's roots/list sees the agent's workspace
// (the `workspace` option, else the run's), as a file:// URI.
import { rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createAgent, run, terminate } from '@openmanus/core';
import { scriptedLlm } from '@openmanus/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createMcpAgent } from '../src/agents/mcpAgent.js';
import { type McpAgent, withMcp } from '../src/agents/withMcp.js';
import { tempWorkspace } from './helpers.js';

const servers: Server[] = [];
let agent: McpAgent | undefined;
const made: string[] = [];
afterEach(async () => {
  await agent?.close();
  for (const http of servers.splice(0)) {
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  }
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  agent = undefined;
});

/** The SDK's McpServer over streamable HTTP (one session: one client), with a tool that answers the client's roots. */
async function rootsServer(): Promise<{ url: string; seen: unknown[] }> {
  const seen: unknown[] = [];
  const sdk = new McpServer({ name: 'sdk-server', version: '1.0.0' });
  sdk.registerTool('roots', { description: 'Lists the client roots.' }, async () => {
    const { roots } = await sdk.server.listRoots();
    seen.push(roots);
    return { content: [{ type: 'text', text: `${roots.length} root(s)` }] };
  });
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => crypto.randomUUID() });
  await sdk.connect(transport);
  const http = createServer((request, response) => void transport.handleRequest(request, response));
  servers.push(http);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, seen };
}

const workspace = async () => {
  const dir = await tempWorkspace();
  made.push(dir);
  return dir;
};

/** What the server's roots/list answered during one run that calls its tool. */
async function rootsSeen(mcpAgent: McpAgent, seen: unknown[], runWorkspace?: string): Promise<unknown> {
  const llm = scriptedLlm([{ toolCalls: [{ name: 'mcp_sdk_roots', arguments: {} }] }, { content: 'Done.' }]);
  await run(mcpAgent, 'Which roots?', {
    llm,
    ...(runWorkspace !== undefined ? { workspace: runWorkspace } : {}),
  });
  return seen.at(-1);
}

describe('withMcp roots', () => {
  it("default to the agent's workspace option", async () => {
    const dir = await workspace();
    const { url, seen } = await rootsServer();
    agent = createMcpAgent({ servers: { sdk: { type: 'http', url } }, workspace: dir });
    expect(await rootsSeen(agent, seen)).toEqual([{ uri: pathToFileURL(dir).href }]);
  });

  it("else follow the run's workspace", async () => {
    const { url, seen } = await rootsServer();
    const first = await workspace();
    const second = await workspace();
    agent = withMcp(createAgent({ name: 'host', tools: [terminate] }), { sdk: { type: 'http', url } });
    expect(await rootsSeen(agent, seen, first)).toEqual([{ uri: pathToFileURL(first).href }]);
    expect(await rootsSeen(agent, seen, second)).toEqual([{ uri: pathToFileURL(second).href }]);
  });

  it("give way to the host's roots", async () => {
    const given = await workspace();
    const { url, seen } = await rootsServer();
    agent = withMcp(
      createAgent({ name: 'host', tools: [terminate] }),
      { sdk: { type: 'http', url } },
      { roots: [given], workspace: await workspace() },
    );
    expect(await rootsSeen(agent, seen, await workspace())).toEqual([{ uri: pathToFileURL(given).href }]);
  });
});
