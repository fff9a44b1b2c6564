// A remote server's questions, completions, progress and log lines reach the call of ours they
// belong to: our server (createMcpServer, whose tools call scope.elicit, scope.sample,
// scope.reportProgress and scope.log) served over HTTP on 127.0.0.1, and our client in an agent's
// run — the run's host answers the question, the run's model the completion once the host approves.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  createAgent,
  defineTool,
  type ElicitationRequest,
  type RunItem,
  type RunOutcome,
  stream,
  type Tool,
  terminate,
} from '@openmanus/core';
import { scriptedLlm } from '@openmanus/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { withMcp } from '../src/agents/withMcp.js';
import { createMcpClient, type McpClient, type McpClientOptions } from '../src/client/mcpClient.js';
import { createMcpServer, type McpToolServer } from '../src/server/mcpServer.js';
import { block, callTool, fromServer, observe, textOf, toolNamed } from './helpers.js';

const FORM = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 2 },
    team: { type: 'string', enum: ['red', 'blue'], default: 'blue' },
    age: { type: 'integer', minimum: 0 },
  },
  required: ['name'],
};

/** The tools of the remote server: each asks something of its client while it runs. */
const remoteTools: Tool[] = [
  defineTool({
    name: 'ask_name',
    description: 'Asks the person their name.',
    parameters: z.object({}),
    // Our server runs the calls of a session one at a time unless they may run side by side.
    parallelSafe: true,
    execute: async (_, scope) => JSON.stringify(await scope.elicit({ message: 'Your name?', schema: FORM })),
  }),
  defineTool({
    name: 'summarize',
    description: "Summarizes with the client's model.",
    parameters: z.object({ text: z.string() }),
    execute: async ({ text }, scope) => {
      const answer = await scope.sample({
        messages: [{ role: 'user', content: { type: 'text', text: `Summarize: ${text}` } }],
        systemPrompt: 'Be brief.',
        maxTokens: 50,
      });
      return `${answer.content.text} (by ${answer.model})`;
    },
  }),
  defineTool({
    name: 'import_rows',
    description: 'Imports rows, saying how far it got.',
    parameters: z.object({}),
    execute: (_, scope) => {
      scope.reportProgress({ progress: 1, total: 2, message: 'row 1' });
      scope.log('info', { rows: 2 }, 'importer');
      scope.reportProgress({ progress: 2, total: 2 });
      return 'Imported 2 rows.';
    },
  }),
  defineTool({
    name: 'chatty',
    description: 'Logs and reports far too much.',
    parameters: z.object({}),
    execute: (_, scope) => {
      for (let i = 1; i <= 1_005; i++) {
        scope.reportProgress({ progress: i });
        scope.log('debug', `line ${i}`);
      }
      return 'Talked.';
    },
  }),
];

let server: McpToolServer | undefined;
let client: McpClient | undefined;
let relayServer: McpToolServer | undefined;
afterEach(async () => {
  await relayServer?.close();
  await client?.close();
  await server?.close();
  relayServer = undefined;
  client = undefined;
  server = undefined;
});

/** Our server over HTTP and our client connected to it. */
async function connect(options: Omit<McpClientOptions, 'servers'> = {}): Promise<McpClient> {
  server = createMcpServer(remoteTools);
  const { url, token } = await server.serveHttp({ port: 0 });
  client = createMcpClient({
    servers: { remote: { type: 'http', url, headers: { Authorization: `Bearer ${token}` } } },
    ...options,
  });
  await client.connect();
  return client;
}

/** Runs an agent with the client's tools; its items and its outcome. */
async function runWith(mcp: McpClient, script: Parameters<typeof scriptedLlm>[0], options: object) {
  const agent = withMcp(createAgent({ name: 'tester', tools: [terminate] }), mcp);
  const llm = scriptedLlm(script, 'scripted-model');
  const items: RunItem[] = [];
  let outcome: RunOutcome | undefined;
  for await (const item of stream(agent, 'Go.', { llm, ...options })) {
    items.push(item);
    if (item.type === 'result') outcome = item.result;
  }
  const observations = (outcome?.state.messages ?? []).flatMap((m) => (m.role === 'tool' ? [m.content] : []));
  return { items, observations, llm };
}

describe('a remote server asks our client during a call', () => {
  it("puts its question to the run's host, and sends the answer with the form's defaults", async () => {
    const mcp = await connect();
    const asked: ElicitationRequest[] = [];
    const { observations } = await runWith(
      mcp,
      [{ toolCalls: [{ name: 'mcp_remote_ask_name', arguments: {} }] }, { content: 'Done.' }],
      {
        onElicitation: (request: ElicitationRequest) => {
          asked.push(request);
          return { action: 'accept', content: { name: 'Ada' } };
        },
      },
    );
    expect(asked).toEqual([{ message: 'Your name?', schema: FORM }]);
    expect(observations).toEqual([
      block('remote', JSON.stringify({ action: 'accept', content: { name: 'Ada', team: 'blue' } })),
    ]);
  });

  it('passes on a decline, and never sends an answer that does not match the form', async () => {
    const mcp = await connect();
    const { observations, items } = await runWith(
      mcp,
      [
        { toolCalls: [{ name: 'mcp_remote_ask_name', arguments: {} }] },
        { toolCalls: [{ name: 'mcp_remote_ask_name', arguments: {} }] },
        { content: 'Done.' },
      ],
      {
        onElicitation: (() => {
          let asked = 0;
          return () =>
            asked++ === 0
              ? { action: 'decline' as const }
              : { action: 'accept' as const, content: { name: 'A', team: 'green' } };
        })(),
      },
    );
    expect(observations[0]).toBe(block('remote', JSON.stringify({ action: 'decline' })));
    // The remote tool is told why (its elicit rejects with our error), and the run's log says so.
    expect(fromServer('remote', String(observations[1]).replace(/^Error: /, ''))).toMatch(
      /the answer does not match the requested schema: "name" must have at least 2 characters/,
    );
    const warnings = items.flatMap((item) => (item.type === 'log' ? [item] : []));
    expect(warnings).toContainEqual(
      expect.objectContaining({ level: 'warning', data: expect.stringContaining('was not sent') }),
    );
  });

  it("has the run's model answer a sampling request once the host approves, and refuses it otherwise", async () => {
    const mcp = await connect();
    const approved = await runWith(
      mcp,
      [
        { toolCalls: [{ name: 'mcp_remote_summarize', arguments: { text: 'cats sleep a lot' } }] },
        { content: 'Cats sleep.' },
        { content: 'Done.' },
      ],
      { onSampling: () => true },
    );
    expect(approved.observations).toEqual([block('remote', 'Cats sleep. (by scripted-model)')]);
    const sampled = approved.llm.requests[1];
    expect(sampled?.messages.map((m) => [m.role, m.content])).toEqual([
      ['system', 'Be brief.'],
      ['user', 'Summarize: cats sleep a lot'],
    ]);

    const refused = await runWith(
      mcp,
      [{ toolCalls: [{ name: 'mcp_remote_summarize', arguments: { text: 'dogs' } }] }, { content: 'Done.' }],
      {},
    );
    expect(refused.observations[0]).toMatch(/^Error: /);
  });

  it("turns the server's progress and log lines into the call's run items", async () => {
    const mcp = await connect();
    const { items, observations } = await runWith(
      mcp,
      [{ toolCalls: [{ name: 'mcp_remote_import_rows', arguments: {} }] }, { content: 'Done.' }],
      {},
    );
    expect(observations).toEqual([block('remote', 'Imported 2 rows.')]);
    const told = items.flatMap((item) =>
      item.type === 'progress' || item.type === 'log' ? [{ ...item, effectId: undefined }] : [],
    );
    expect(told).toEqual([
      {
        type: 'progress',
        effectId: undefined,
        tool: 'mcp_remote_import_rows',
        progress: 1,
        total: 2,
        message: 'row 1',
      },
      {
        type: 'log',
        effectId: undefined,
        tool: 'mcp_remote_import_rows',
        level: 'info',
        data: { rows: 2 },
        logger: 'importer',
      },
      { type: 'progress', effectId: undefined, tool: 'mcp_remote_import_rows', progress: 2, total: 2 },
    ]);
  });

  it('keeps at most 1,000 log lines and progress reports of a call, and says the rest were dropped', async () => {
    const mcp = await connect();
    const { items, observations } = await runWith(
      mcp,
      [{ toolCalls: [{ name: 'mcp_remote_chatty', arguments: {} }] }, { content: 'Done.' }],
      {},
    );
    expect(observations).toEqual([block('remote', 'Talked.')]);
    const logs = items.flatMap((item) => (item.type === 'log' ? [item] : []));
    expect(logs).toHaveLength(1_001);
    expect(logs[999]?.data).toBe('line 1000');
    expect(logs[1_000]).toMatchObject({ level: 'warning', data: expect.stringContaining('more than 1000 log lines') });
    expect(items.filter((item) => item.type === 'progress')).toHaveLength(1_000);
  });

  it('relays the question on when our own MCP server serves the remote tool (scope.relay)', async () => {
    const mcp = await connect();
    relayServer = createMcpServer([toolNamed(mcp, 'mcp_remote_ask_name')]);
    const [ours, theirs] = InMemoryTransport.createLinkedPair();
    await relayServer.connect(ours);
    const outer = new Client({ name: 'outer', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    const asked: string[] = [];
    outer.setRequestHandler(ElicitRequestSchema, ({ params }) => {
      asked.push(params.message);
      return { action: 'accept', content: { name: 'Grace', team: 'red' } };
    });
    await outer.connect(theirs);
    try {
      const result = await callTool(outer, 'mcp_remote_ask_name');
      expect(asked).toEqual(['Your name?']);
      // Our server passes on what its model read: the remote server's text, in its block.
      expect(textOf(result)).toBe(
        block('remote', JSON.stringify({ action: 'accept', content: { name: 'Grace', team: 'red' } })),
      );
    } finally {
      await outer.close();
    }
  });

  it('does not guess which of two calls in flight a question belongs to: the client-level fallback answers', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const waiting = defineTool({
      name: 'wait',
      description: 'Waits until released.',
      parameters: z.object({}),
      parallelSafe: true,
      execute: async () => {
        await gate;
        return 'released';
      },
    });
    server = createMcpServer([...remoteTools, waiting]);
    const { url, token } = await server.serveHttp({ port: 0 });
    const contexts: unknown[] = [];
    client = createMcpClient({
      servers: { remote: { type: 'http', url, headers: { Authorization: `Bearer ${token}` } } },
      onElicitation: (_request, context) => {
        contexts.push(context);
        release();
        return { action: 'accept', content: { name: 'Fallback' } };
      },
    });
    await client.connect();
    const pending = observe(toolNamed(client, 'mcp_remote_wait'), {});
    // Two calls in flight: the question of the second is not the first's to answer.
    const asked = await observe(toolNamed(client, 'mcp_remote_ask_name'), {});
    expect(asked.output).toBe(
      block('remote', JSON.stringify({ action: 'accept', content: { name: 'Fallback', team: 'blue' } })),
    );
    expect(contexts).toEqual([{ server: 'remote', callsInFlight: 2 }]);
    expect((await pending).output).toBe(block('remote', 'released'));
  });
});
