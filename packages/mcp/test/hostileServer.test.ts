// A hostile MCP server (a real process, over stdio and over HTTP) must not take the host down: tool
// schemas nested 5,000 deep or megabytes long, a tool the protocol's schema refuses, results nested
// 10,000 deep, 5 MB of text, a 7 MB image, a message of 20 MB. The bad tools are left out with a note naming each and
// why; the others work; an agent on the client runs, and the host lives on after it.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createAgent, createOpenAiLlm, defaultPolicies, run, terminate } from '@openmanus/core';
import { processesMatching, startOpenAiServer } from '@openmanus/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withMcp } from '../src/agents/withMcp.js';
import type { McpServerConfig } from '../src/client/config.js';
import { createMcpClient, type McpClient } from '../src/client/mcpClient.js';
import { MAX_RESULT_CHARS } from '../src/client/results.js';
import { block, fromServer, newMarker, nextEvent, observe, toolNamed } from './helpers.js';

const hostile = join(import.meta.dirname, 'fixtures', 'hostileServer.mjs');

const LEFT_OUT = [
  { tool: 'deep_schema', reason: 'its input schema is nested more than 64 levels deep' },
  { tool: 'huge_schema', reason: 'its input schema is longer than 100,000 characters' },
  { tool: 'not_an_object', reason: expect.stringMatching(/^it is not a valid MCP tool: .*\(at inputSchema\.type\)$/) },
];
const OFFERED = [
  'mcp_hostile_echo',
  'mcp_hostile_deep_output',
  'mcp_hostile_deep_result',
  'mcp_hostile_deep_text_result',
  'mcp_hostile_huge_result',
  'mcp_hostile_flood',
  'mcp_hostile_huge_image',
  'mcp_hostile_escapes',
];

/** The hostile server over streamable HTTP, as a process: its url once it listens. */
async function startHttpServer(tag: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [hostile, '--http', '--tag', tag], { stdio: ['ignore', 'pipe', 'inherit'] });
  if (!child.stdout) throw new Error('no stdout');
  for await (const line of createInterface({ input: child.stdout })) {
    const { port } = JSON.parse(line) as { port: number };
    return { url: `http://127.0.0.1:${port}/mcp`, child };
  }
  throw new Error('the hostile server ended before it listened');
}

describe.each([
  ['stdio', async (tag: string) => ({ config: { command: process.execPath, args: [hostile, '--tag', tag] } })],
  [
    'streamable HTTP',
    async (tag: string) => {
      const { url, child } = await startHttpServer(tag);
      const exited = new Promise((resolve) => child.once('exit', resolve));
      return { config: { type: 'http', url } as const, stop: () => child.kill() && exited };
    },
  ],
] as const)('a client of a hostile MCP server over %s', (_transport, start) => {
  const tag = newMarker();
  let client: McpClient;
  let stop: (() => unknown) | undefined;
  beforeAll(async () => {
    const started: { config: McpServerConfig; stop?: () => unknown } = await start(tag);
    stop = started.stop;
    client = createMcpClient({
      servers: { hostile: started.config },
      reconnect: { initialDelayMs: 20, maxDelayMs: 100 },
    });
    await client.connect();
  });
  afterAll(async () => {
    await client.close();
    await stop?.();
    expect(processesMatching(tag)).toEqual([]);
  });

  it('leaves out the tools whose schemas are too deep, too long or invalid, naming each and why; offers the rest', () => {
    const status = client.status().hostile;
    expect(status).toMatchObject({ state: 'connected', tools: OFFERED, leftOut: LEFT_OUT });
    expect(client.tools().map((tool) => tool.spec.name)).toEqual(OFFERED);
  });

  it('the good tools work', async () => {
    const echoed = await observe(toolNamed(client, 'mcp_hostile_echo'), { text: 'still here' });
    expect([echoed.output, echoed.isError]).toEqual([block('hostile', 'echo: still here'), undefined]);
    // Its output schema is too deep to compile: it was never read, and the tool is called as any other.
    expect((await observe(toolNamed(client, 'mcp_hostile_deep_output'), {})).output).toBe(
      `Error: ${block('hostile', 'no tool deep_output')}`,
    );
  });

  it('results nested 10,000 deep, 5 MB long or with a 7 MB image are bounded, not thrown', async () => {
    expect((await observe(toolNamed(client, 'mcp_hostile_deep_result'), {})).output).toBe(
      block('hostile', '[structured content not shown: nested more than 64 levels deep]'),
    );
    expect((await observe(toolNamed(client, 'mcp_hostile_deep_text_result'), {})).output).toBe(
      block('hostile', 'shallow text'),
    );
    // Compared by parts: a failure must not print megabytes.
    const output = fromServer('hostile', (await observe(toolNamed(client, 'mcp_hostile_huge_result'), {})).output);
    const note = `\n…[${5_000_000 - MAX_RESULT_CHARS} more characters of the result not shown]`;
    expect([output.length, output.endsWith(note), /^y+$/.test(output.slice(0, -note.length))]).toEqual([
      MAX_RESULT_CHARS + note.length,
      true,
      true,
    ]);
    const image = await observe(toolNamed(client, 'mcp_hostile_huge_image'), {});
    expect(image.image).toBeUndefined();
    expect(image.output).toBe(
      block('hostile', '[image (image/png, 7.2 MB) not shown: over the 5.0 MB an image may have]'),
    );
  });

  it('an agent on the client runs, is told which tools were left out and why, and the host lives on', async () => {
    const model = await startOpenAiServer({
      script: [
        { toolCalls: [{ name: 'mcp_hostile_echo', arguments: { text: 'hi' } }] },
        { toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
      ],
    });
    try {
      const llm = createOpenAiLlm({ model: 'm', apiKey: 'sk-test', baseURL: model.baseURL, maxRetries: 0 });
      const agent = withMcp(
        createAgent({ name: 'host', tools: [terminate], policies: defaultPolicies({ maxSteps: 4 }) }),
        client,
      );
      const result = await run(agent, 'Echo hi', { llm });
      expect(result.state.status).toBe('finished');
      const first = model.requests[0];
      const tools = (first?.tools ?? []).map((tool) => (tool as { function: { name: string } }).function.name);
      expect(tools).toEqual(['terminate', ...OFFERED]);
      const note = first?.messages
        .filter((m) => m.role === 'system')
        .map((m) => String(m.content))
        .at(-1);
      expect(note).toMatch(
        /^The MCP server "hostile" offers tools that were left out, so you cannot call them: "deep_schema" \(its input schema is nested more than 64 levels deep\); "huge_schema" \(its input schema is longer than 100,000 characters\); "not_an_object" \(it is not a valid MCP tool: .*\)\.$/,
      );
      expect(model.requests[1]?.messages.find((m) => m.role === 'tool')?.content).toBe(block('hostile', 'echo: hi'));
    } finally {
      await model.close();
    }
    // The client lists again (as a refresh or a reconnect would): the same tools, and no throw.
    await client.refresh();
    expect(client.status().hostile?.state).toBe('connected');
    expect(client.tools().map((tool) => tool.spec.name)).toEqual(OFFERED);
  });

  it('a message of 20 MB is refused before it is read whole (over 10 MB, as the SDK bounds a stdio line); the server is reconnected', async () => {
    const reconnected = nextEvent(client, (event) => event.type === 'connected');
    const flooded = await observe(toolNamed(client, 'mcp_hostile_flood'), {});
    expect(flooded.isError).toBe(true);
    expect(flooded.output.length).toBeLessThan(10_000);
    await reconnected;
    expect((await observe(toolNamed(client, 'mcp_hostile_echo'), { text: 'back' })).output).toBe(
      block('hostile', 'echo: back'),
    );
  });
});

describe('a server whose one bad tool has a schema 5,000 deep (185 kB)', () => {
  it('connects with its other tools, and names the deep one and why, over and over (no RangeError escapes)', async () => {
    const tag = newMarker();
    const client = createMcpClient({
      servers: { hostile: { command: process.execPath, args: [hostile, '--tools', 'echo,deep_schema', '--tag', tag] } },
    });
    try {
      await client.connect();
      for (let listing = 0; listing < 3; listing++) {
        expect(client.status().hostile).toMatchObject({
          state: 'connected',
          tools: ['mcp_hostile_echo'],
          leftOut: [{ tool: 'deep_schema', reason: 'its input schema is nested more than 64 levels deep' }],
        });
        await client.refresh();
      }
      expect((await observe(toolNamed(client, 'mcp_hostile_echo'), { text: 'ok' })).output).toBe(
        block('hostile', 'echo: ok'),
      );
    } finally {
      await client.close();
    }
    expect(processesMatching(tag)).toEqual([]);
  });
});
