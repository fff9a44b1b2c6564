// A call's `callTimeoutMs` counts the server's work, not a person's answer: while a question
// (elicitation) or a sampling request the server sent during our tools/call waits on the run's host,
// neither the SDK's request clock nor core's time limit fails the call. A server that does not answer
// still times out as before. The SDK's own McpServer, in-process over streamable HTTP on 127.0.0.1;
// the person takes three times the call's limit (real time: the SDK's sockets run on it).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  createResourcePool,
  type ElicitationResult,
  errAsync,
  type HostCallbacks,
  type LlmPort,
  type RunScope,
  type Tool,
} from '@openmanus/core';
import { executeTool } from '@openmanus/core/internal';
import { scriptedLlm } from '@openmanus/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createMcpClient, type McpClient } from '../src/client/mcpClient.js';
import { block, toolNamed } from './helpers.js';

// Long enough for the call's own round trips on a loaded box; the person takes three times that.
const CALL_TIMEOUT_MS = 1_000;
/** How long the person takes to answer: well past the call's limit. */
const PERSON_MS = 3 * CALL_TIMEOUT_MS;

let http: Server | undefined;
let client: McpClient | undefined;
afterEach(async () => {
  await client?.close();
  http?.closeAllConnections();
  await new Promise((resolve) => (http ? http.close(resolve) : resolve(undefined)));
  client = undefined;
  http = undefined;
});

const REGION = { type: 'object' as const, properties: { region: { type: 'string' as const } }, required: ['region'] };

/** The SDK's McpServer, whose tools ask our client during the call (on the call's stream), and our client. */
async function connect() {
  const sdk = new McpServer({ name: 'sdk-server', version: '1.0.0' });
  let cancelled: () => void = () => {};
  const hangCancelled = new Promise<void>((resolve) => (cancelled = resolve));
  const ask = (requestId: string | number) =>
    sdk.server.request(
      { method: 'elicitation/create', params: { message: 'Which region?', requestedSchema: REGION } },
      ElicitResultSchema,
      { relatedRequestId: requestId },
    );
  const text = (value: unknown) => ({ content: [{ type: 'text' as const, text: JSON.stringify(value) }] });
  sdk.registerTool('ask_region', { description: 'Asks for a region.' }, async (extra) =>
    text(await ask(extra.requestId)),
  );
  sdk.registerTool('ask_then_hang', { description: 'Asks, then never answers.' }, async (extra) => {
    await ask(extra.requestId);
    return new Promise<never>(() => {});
  });
  sdk.registerTool('summarize', { description: "Summarizes with the client's model." }, async (extra) => {
    const answer = await sdk.server.createMessage(
      { messages: [{ role: 'user', content: { type: 'text', text: 'Summarize: rain.' } }], maxTokens: 20 },
      { relatedRequestId: extra.requestId },
    );
    return text(answer.content);
  });
  sdk.registerTool('hang', { description: 'Never answers.' }, (extra) => {
    extra.signal.addEventListener('abort', () => cancelled());
    return new Promise<never>(() => {});
  });
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => crypto.randomUUID() });
  await sdk.connect(transport);
  http = createServer((request, response) => void transport.handleRequest(request, response));
  await new Promise<void>((resolve) => http?.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  client = createMcpClient({
    servers: { sdk: { type: 'http', url: `http://127.0.0.1:${port}/mcp` } },
    callTimeoutMs: CALL_TIMEOUT_MS,
  });
  await client.connect();
  return { mcp: client, hangCancelled };
}

/** The call as a run makes it (core's time limit included), with the run's host and model. */
async function callAs(tool: Tool, host: HostCallbacks, llm?: LlmPort) {
  const pool = createResourcePool();
  const scope: RunScope = {
    runId: 'test',
    signal: new AbortController().signal,
    llm: llm ?? { model: 'none', complete: () => errAsync({ kind: 'config', message: 'no model' }) },
    resource: (key, open, close) => pool.get(key, open, close),
    emit: () => {},
    changeTools: async () => {},
    ...host,
  };
  try {
    const { timeoutMs } = tool.spec;
    const call = { id: 'c1', name: tool.spec.name, arguments: '{}' };
    const effect = {
      type: 'callTool',
      id: 'c1',
      call,
      args: {},
      parallelSafe: false,
      ...(timeoutMs ? { timeoutMs } : {}),
    } as const;
    return await executeTool(effect, tool, scope);
  } finally {
    await pool.close();
  }
}

const later = <T>(value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), PERSON_MS));

describe('callTimeoutMs while the server waits on a person', () => {
  it('a question answered after the limit gets to the server, and the call completes with its answer', async () => {
    const { mcp } = await connect();
    const event = await callAs(toolNamed(mcp, 'mcp_sdk_ask_region'), {
      onElicitation: () => later<ElicitationResult>({ action: 'accept', content: { region: 'eu-west' } }),
    });
    expect(event).toMatchObject({
      output: block('sdk', JSON.stringify({ action: 'accept', content: { region: 'eu-west' } })),
    });
    expect(event).not.toHaveProperty('isError');
  });

  it('a sampling request the host approves after the limit is answered by the run’s model', async () => {
    const { mcp } = await connect();
    const event = await callAs(
      toolNamed(mcp, 'mcp_sdk_summarize'),
      { onSampling: () => later(true) },
      scriptedLlm([{ content: 'Wet.' }], 'run-model'),
    );
    expect(event).toMatchObject({ output: block('sdk', JSON.stringify({ type: 'text', text: 'Wet.' })) });
  });

  it('once the person has answered, the limit runs again', async () => {
    const { mcp } = await connect();
    const event = await callAs(toolNamed(mcp, 'mcp_sdk_ask_then_hang'), {
      onElicitation: () => ({ action: 'accept', content: { region: 'eu-west' } }),
    });
    expect(event).toMatchObject({
      output: `Error: the MCP server "sdk" did not answer within ${CALL_TIMEOUT_MS} ms`,
      isError: true,
    });
  });

  it('a server that never answers still times out, is told the call is cancelled, and stays connected', async () => {
    const { mcp, hangCancelled } = await connect();
    const event = await callAs(toolNamed(mcp, 'mcp_sdk_hang'), {});
    expect(event).toMatchObject({
      output: `Error: the MCP server "sdk" did not answer within ${CALL_TIMEOUT_MS} ms`,
      isError: true,
    });
    await hangCancelled;
    expect(mcp.status().sdk?.state).toBe('connected');
  });
});
