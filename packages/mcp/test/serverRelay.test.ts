// A tool's questions go to the MCP client that called it: scope.sample as sampling/createMessage
// (the client's model answers), scope.elicit as elicitation/create (its user answers), on the call's
// own stream, cancelled when the call ends, refused when the client declared no such capability.
import { Client, type ClientOptions } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  type CreateMessageRequest,
  CreateMessageRequestSchema,
  type ElicitRequest,
  ElicitRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { defineTool, type Tool } from '@openmanus/core';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMcpServer, type McpToolServer } from '../src/server/mcpServer.js';
import { callTool, textOf } from './helpers.js';

const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

const contact = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'Who to write to' },
    urgent: { type: 'boolean', default: false },
  },
  required: ['name'],
};

const tools: Tool[] = [
  defineTool({
    name: 'summarise',
    description: "Summarises a text with the client's model.",
    parameters: z.object({ text: z.string() }),
    execute: async ({ text }, scope) => {
      const answer = await scope.sample({
        systemPrompt: 'You summarise in one line.',
        messages: [
          { role: 'user', content: { type: 'text', text } },
          { role: 'user', content: { type: 'image', data: PIXEL, mimeType: 'image/png' } },
        ],
        maxTokens: 50,
        temperature: 0.2,
        stopSequences: ['\n'],
      });
      return `${answer.model} (${answer.stopReason ?? 'no reason'}): ${answer.content.text}`;
    },
  }),
  defineTool({
    name: 'write_to',
    description: 'Asks the person whom to write to.',
    parameters: z.object({}),
    execute: async (_, scope) => {
      const answer = await scope.elicit({ message: 'Whom should I write to?', schema: contact });
      return answer.action === 'accept'
        ? `Writing to ${JSON.stringify(answer.content)}`
        : `No letter: ${answer.action}`;
    },
  }),
  defineTool({
    name: 'sign_in',
    description: 'Sends the person to a URL to sign in.',
    parameters: z.object({}),
    execute: async (_, scope) => {
      const answer = await scope.elicit({
        mode: 'url',
        message: 'Sign in to the calendar.',
        url: 'https://calendar.example/authorize',
        elicitationId: 'sign-1',
      });
      return JSON.stringify(answer);
    },
  }),
  defineTool({
    name: 'weather_note',
    description: "Asks the client's model, which may call get_weather.",
    parameters: z.object({}),
    execute: async (_, scope) => {
      const answer = await scope.sample({
        messages: [{ role: 'user', content: { type: 'text', text: 'Weather in Oslo?' } }],
        maxTokens: 50,
        tools: [{ name: 'get_weather', description: 'The weather', inputSchema: { type: 'object' } }],
        toolChoice: 'required',
      });
      return JSON.stringify(answer);
    },
  }),
  defineTool({
    name: 'quick_question',
    description: 'Has 1 s for its own work, and asks the person something.',
    parameters: z.object({}),
    timeoutMs: 1_000,
    execute: async (_, scope) => {
      const answer = await scope.elicit({ message: 'Whom should I write to?', schema: contact });
      return `Answered: ${answer.action}`;
    },
  }),
  defineTool({
    name: 'ask_and_go',
    description: 'Asks the person something and does not wait for the answer.',
    parameters: z.object({}),
    execute: (_, scope) => {
      scope.elicit({ message: 'Still there?', schema: contact }).catch(() => {});
      return 'Asked, and gone.';
    },
  }),
];

let server: McpToolServer | undefined;
const clients: Client[] = [];
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((client) => client.close()));
  await server?.close();
  server = undefined;
});

async function connect(capabilities: NonNullable<ClientOptions['capabilities']> = { sampling: {}, elicitation: {} }) {
  server ??= createMcpServer(tools);
  const [ours, theirs] = InMemoryTransport.createLinkedPair();
  await server.connect(ours);
  const client = new Client({ name: 'relay-test', version: '1.0.0' }, { capabilities });
  clients.push(client);
  await client.connect(theirs);
  return client;
}

describe("sampling: a tool asks the client's model", () => {
  it('sends the request as the tool made it and gives the tool the answer', async () => {
    const client = await connect();
    const asked: CreateMessageRequest['params'][] = [];
    client.setRequestHandler(CreateMessageRequestSchema, ({ params }) => {
      asked.push(params);
      return {
        role: 'assistant',
        content: { type: 'text', text: 'A red pixel.' },
        model: 'their-model',
        stopReason: 'endTurn',
      };
    });
    const result = await callTool(client, 'summarise', { text: 'A picture of one red pixel.' });
    expect(textOf(result)).toBe('their-model (endTurn): A red pixel.');
    expect(asked).toEqual([
      {
        systemPrompt: 'You summarise in one line.',
        messages: [
          { role: 'user', content: { type: 'text', text: 'A picture of one red pixel.' } },
          { role: 'user', content: { type: 'image', data: PIXEL, mimeType: 'image/png' } },
        ],
        maxTokens: 50,
        temperature: 0.2,
        stopSequences: ['\n'],
      },
    ]);
  });

  it('fails the call, saying why, when the model answers with something other than text', async () => {
    const client = await connect();
    client.setRequestHandler(CreateMessageRequestSchema, () => ({
      role: 'assistant',
      content: { type: 'image', data: PIXEL, mimeType: 'image/png' },
      model: 'their-model',
    }));
    const result = await callTool(client, 'summarise', { text: 'Draw it.' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("The MCP client's model answered with image content, where a tool takes text.");
  });
});

describe("elicitation: a tool asks the client's user", () => {
  it('sends the question with its schema and gives the tool the answer', async () => {
    const client = await connect();
    const asked: ElicitRequest['params'][] = [];
    client.setRequestHandler(ElicitRequestSchema, ({ params }) => {
      asked.push(params);
      return { action: 'accept', content: { name: 'Aiko', urgent: true } };
    });
    expect(textOf(await callTool(client, 'write_to'))).toBe('Writing to {"name":"Aiko","urgent":true}');
    expect(asked).toEqual([{ mode: 'form', message: 'Whom should I write to?', requestedSchema: contact }]);
  });

  it('gives the tool a refusal or a dismissal as it was', async () => {
    const client = await connect();
    const actions = ['decline', 'cancel'] as const;
    let next = 0;
    client.setRequestHandler(ElicitRequestSchema, () => ({ action: actions[next++] ?? 'cancel' }));
    expect(textOf(await callTool(client, 'write_to'))).toBe('No letter: decline');
    expect(textOf(await callTool(client, 'write_to'))).toBe('No letter: cancel');
  });

  it('cancels a question still open when the call has ended', async () => {
    const client = await connect();
    let asked = 0;
    const cancelled = new Promise<string>((resolve) => {
      client.setRequestHandler(ElicitRequestSchema, (_, extra) => {
        // The SDK's client ignores the cancellation of request id 0 (a falsy id), so the first
        // question is answered: the one cancelled is the second.
        if (asked++ === 0) return { action: 'decline' };
        return new Promise((answer) => {
          extra.signal.addEventListener('abort', () => {
            resolve(String(extra.signal.reason));
            answer({ action: 'cancel' });
          });
        });
      });
    });
    expect(textOf(await callTool(client, 'write_to'))).toBe('No letter: decline');
    expect(textOf(await callTool(client, 'ask_and_go'))).toBe('Asked, and gone.');
    expect(await cancelled).toContain('the tool call has ended');
  });
});

describe('what MCP 2025-11-25 added', () => {
  it('sends a URL question to a client that declared URL mode; "accept" comes back with no content', async () => {
    const client = await connect({ elicitation: { url: {} } });
    const asked: ElicitRequest['params'][] = [];
    client.setRequestHandler(ElicitRequestSchema, ({ params }) => {
      asked.push(params);
      return { action: 'accept' };
    });
    expect(textOf(await callTool(client, 'sign_in'))).toBe('{"action":"accept","content":{}}');
    expect(asked).toEqual([
      {
        mode: 'url',
        message: 'Sign in to the calendar.',
        url: 'https://calendar.example/authorize',
        elicitationId: 'sign-1',
      },
    ]);
  });

  it("offers the tool's tools to the client's model and gives the tool the calls it asked for", async () => {
    const client = await connect({ sampling: { tools: {} } });
    const asked: CreateMessageRequest['params'][] = [];
    client.setRequestHandler(CreateMessageRequestSchema, ({ params }) => {
      asked.push(params);
      return {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'use-1', name: 'get_weather', input: { city: 'Oslo' } },
        ],
        model: 'their-model',
        stopReason: 'toolUse',
      };
    });
    expect(JSON.parse(textOf(await callTool(client, 'weather_note')))).toEqual({
      role: 'assistant',
      content: { type: 'text', text: 'Checking.' },
      toolUse: [{ type: 'tool_use', id: 'use-1', name: 'get_weather', input: { city: 'Oslo' } }],
      model: 'their-model',
      stopReason: 'toolUse',
    });
    expect(asked).toEqual([
      {
        messages: [{ role: 'user', content: { type: 'text', text: 'Weather in Oslo?' } }],
        maxTokens: 50,
        tools: [{ name: 'get_weather', description: 'The weather', inputSchema: { type: 'object' } }],
        toolChoice: { mode: 'required' },
      },
    ]);
  });

  it('does not ask a client that declared form mode only, or sampling without tools: the call says what it lacks', async () => {
    const client = await connect({ elicitation: { form: {} }, sampling: {} });
    client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept' }));
    client.setRequestHandler(CreateMessageRequestSchema, () => ({
      role: 'assistant',
      content: { type: 'text', text: 'unasked' },
      model: 'their-model',
    }));
    const url = await callTool(client, 'sign_in');
    expect(url.isError).toBe(true);
    expect(textOf(url)).toContain(
      'The MCP client cannot send its user to a URL (URL-mode elicitation): it did not declare the "elicitation.url" capability.',
    );
    const sampled = await callTool(client, 'weather_note');
    expect(sampled.isError).toBe(true);
    expect(textOf(sampled)).toContain(
      'The MCP client cannot let its model call tools (sampling with tools): it did not declare the "sampling.tools" capability.',
    );
  });
});

describe('a client that cannot answer', () => {
  it('is not asked: the call fails, naming the capability the client did not declare', async () => {
    const client = await connect({});
    const sampled = await callTool(client, 'summarise', { text: 'Anything.' });
    expect(sampled.isError).toBe(true);
    expect(textOf(sampled)).toContain(
      'The MCP client cannot ask its model (sampling): it did not declare the "sampling" capability.',
    );
    const elicited = await callTool(client, 'write_to');
    expect(elicited.isError).toBe(true);
    expect(textOf(elicited)).toContain(
      'The MCP client cannot ask its user (elicitation): it did not declare the "elicitation" capability.',
    );
  });
});

describe('over streamable HTTP', () => {
  it("sends the question on the call's own stream, and takes the answer back there", async () => {
    server = createMcpServer(tools);
    const serving = await server.serveHttp({ port: 0 });
    // An SDK client that can answer opens the session; its call is POSTed by hand to watch its stream.
    const transport = new StreamableHTTPClientTransport(new URL(serving.url), {
      requestInit: { headers: { Authorization: `Bearer ${serving.token}` } },
    });
    const client = new Client({ name: 'relay-test', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    clients.push(client);
    await client.connect(transport);
    const headers = {
      authorization: `Bearer ${serving.token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': transport.sessionId ?? '',
      'mcp-protocol-version': transport.protocolVersion ?? '',
    };
    const response = await fetch(serving.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 11,
        method: 'tools/call',
        params: { name: 'write_to', arguments: {} },
      }),
    });
    const messages = sseMessages(response);
    const question = (await messages.next()).value as { id: number; method: string };
    expect(question.method).toBe('elicitation/create');
    const answered = await fetch(serving.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: question.id, result: { action: 'accept', content: { name: 'Ren' } } }),
    });
    expect(answered.status).toBe(202);
    const result = (await messages.next()).value as { id: number; result: { content: unknown } };
    expect(result.id).toBe(11);
    expect(result.result.content).toEqual([{ type: 'text', text: 'Writing to {"name":"Ren"}' }]);
  });
});

/** The JSON-RPC messages of an SSE response, as they come. */
async function* sseMessages(response: Response): AsyncGenerator<unknown> {
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of response.body as ReadableStream<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true });
    let end = buffered.indexOf('\n\n');
    while (end !== -1) {
      const data = buffered
        .slice(0, end)
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice('data:'.length).trim())
        .join('');
      buffered = buffered.slice(end + 2);
      if (data !== '') yield JSON.parse(data);
      end = buffered.indexOf('\n\n');
    }
  }
}

describe("a tool's time limit while the client's person answers", () => {
  it('does not run: a question answered after the limit still gets its answer to the tool', async () => {
    const client = await connect();
    client.setRequestHandler(ElicitRequestSchema, async () => {
      // A person who takes longer than the tool's whole time limit (1 s) to answer.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      return { action: 'decline' };
    });
    const result = await callTool(client, 'quick_question');
    expect(result.isError ?? false).toBe(false);
    expect(textOf(result)).toBe('Answered: decline');
  });
});
