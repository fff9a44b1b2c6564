// What our server's tools answer and how they are listed, over the official SDK client in memory:
// every MCP content type, structured results with their output schema, a schema's own dialect.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { defineTool, type Tool } from '@openmanus/core';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMcpServer, type McpToolServer } from '../src/server/mcpServer.js';
import { callTool } from './helpers.js';

const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';

const tools: Tool[] = [
  defineTool({
    name: 'every_part',
    description: 'Answers with one part of each MCP content type.',
    parameters: z.object({}),
    execute: () => ({
      output: 'A report, a chart, a recording, the data and where the rest is.',
      content: [
        { type: 'text', text: 'A report.' },
        { type: 'image', data: PIXEL, mimeType: 'image/png' },
        { type: 'audio', data: WAV, mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'file:///srv/data.json', mimeType: 'application/json', text: '{"a":1}' } },
        { type: 'resource', resource: { uri: 'file:///srv/data.bin', blob: 'AAEC' } },
        { type: 'resource_link', uri: 'file:///srv/rest.csv', name: 'rest.csv', mimeType: 'text/csv' },
      ],
    }),
  }),
  defineTool({
    name: 'chart_only',
    description: 'Answers with an image and no text.',
    parameters: z.object({}),
    execute: () => ({ output: '', image: { base64: PIXEL, mimeType: 'image/png' } }),
  }),
  defineTool({
    name: 'weather',
    description: 'The weather in a city, as a structured result.',
    parameters: z.object({ city: z.string() }),
    outputSchema: z.object({ city: z.string(), celsius: z.number() }),
    execute: ({ city }) => ({ output: `${city}: 21 °C`, structured: { city, celsius: 21 } }),
  }),
  defineTool<{ gives: 'nothing' | 'wrong' | 'failure' }>({
    name: 'forecast',
    description: 'A forecast that is not always what its output schema says.',
    parameters: { type: 'object', properties: { gives: { enum: ['nothing', 'wrong', 'failure'] } } },
    outputSchema: { type: 'object', properties: { celsius: { type: 'number' } }, required: ['celsius'] },
    execute: ({ gives }) =>
      gives === 'nothing'
        ? 'Warm.'
        : gives === 'wrong'
          ? { output: 'Warm.', structured: { celsius: 'warm' } }
          : { output: 'No forecast today.', isError: true },
  }),
  defineTool<{ name?: string }>({
    name: 'dialect',
    description: 'A JSON Schema of draft 2020-12, with its $schema.',
    parameters: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { name: { type: 'string' } },
      additionalProperties: false,
    },
    execute: () => 'ok',
  }),
];

let server: McpToolServer | undefined;
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
});

async function connect(served: Tool[] = tools) {
  server = createMcpServer(served);
  const [ours, theirs] = InMemoryTransport.createLinkedPair();
  await server.connect(ours);
  client = new Client({ name: 'content-test', version: '1.0.0' });
  await client.connect(theirs);
  return client;
}

describe('tool results in every MCP content type', () => {
  it("gives the tool's own content parts as they are, in order", async () => {
    const result = await callTool(await connect(), 'every_part');
    expect(result.isError).toBeUndefined();
    expect(result.content).toEqual([
      { type: 'text', text: 'A report.' },
      { type: 'image', data: PIXEL, mimeType: 'image/png' },
      { type: 'audio', data: WAV, mimeType: 'audio/wav' },
      { type: 'resource', resource: { uri: 'file:///srv/data.json', mimeType: 'application/json', text: '{"a":1}' } },
      { type: 'resource', resource: { uri: 'file:///srv/data.bin', blob: 'AAEC' } },
      { type: 'resource_link', uri: 'file:///srv/rest.csv', name: 'rest.csv', mimeType: 'text/csv' },
    ]);
  });

  it('sends an image a tool returned alone without an empty text part', async () => {
    const result = await callTool(await connect(), 'chart_only');
    expect(result.content).toEqual([{ type: 'image', data: PIXEL, mimeType: 'image/png' }]);
  });

  it('gives a structured result as structuredContent, listed with its output schema (the SDK client checks it)', async () => {
    const mcp = await connect();
    const weather = (await mcp.listTools()).tools.find((tool) => tool.name === 'weather');
    expect(weather?.outputSchema).toMatchObject({
      type: 'object',
      properties: { city: { type: 'string' }, celsius: { type: 'number' } },
      required: ['city', 'celsius'],
    });
    expect(weather?.outputSchema).not.toHaveProperty('$schema');
    const result = await callTool(mcp, 'weather', { city: 'Kyoto' });
    expect(result.structuredContent).toEqual({ city: 'Kyoto', celsius: 21 });
    expect(result.content).toEqual([{ type: 'text', text: 'Kyoto: 21 °C' }]);
  });

  it('answers a result that breaks the output schema as a failure, saying how (the SDK client would refuse it)', async () => {
    const mcp = await connect();
    await mcp.listTools();
    const nothing = await callTool(mcp, 'forecast', { gives: 'nothing' });
    expect(nothing).toEqual({
      content: [{ type: 'text', text: 'Error: forecast has an output schema but gave no structured result.' }],
      isError: true,
    });
    const wrong = await callTool(mcp, 'forecast', { gives: 'wrong' });
    expect(wrong.isError).toBe(true);
    expect(wrong.content).toEqual([
      {
        type: 'text',
        text: expect.stringMatching(
          /^Error: forecast's structured result does not match its output schema: .*celsius.*number/,
        ),
      },
    ]);
    // A failure needs no structured result.
    expect(await callTool(mcp, 'forecast', { gives: 'failure' })).toEqual({
      content: [{ type: 'text', text: 'Error: No forecast today.' }],
      isError: true,
    });
  });

  it('lists a JSON Schema with its own $schema, and tools without an output schema without one', async () => {
    const listed = (await (await connect()).listTools()).tools;
    const dialect = listed.find((tool) => tool.name === 'dialect');
    expect(dialect?.inputSchema).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { name: { type: 'string' } },
      additionalProperties: false,
    });
    expect(listed.find((tool) => tool.name === 'every_part')).not.toHaveProperty('outputSchema');
    // A zod schema's $schema is zod's, not the author's: it is not listed.
    expect(listed.find((tool) => tool.name === 'weather')?.inputSchema).not.toHaveProperty('$schema');
  });

  it('refuses a tool whose structured result would not be an object', () => {
    const list = defineTool({
      name: 'list',
      description: 'A list.',
      parameters: z.object({}),
      outputSchema: { type: 'array', items: { type: 'string' } },
      execute: () => 'a',
    });
    expect(() => createMcpServer([list])).toThrow(/output schema of type "array"/);
  });
});
