// The server the MCP conformance suite tests: the tools of its reference "everything" server
// (examples/servers/typescript/everything-server.ts of @modelcontextprotocol/conformance 0.1.16),
// made with our defineTool and served by our createMcpServer, as far as our API can express them.
//
// The reference's pauses between log lines and progress reports are left out: nothing depends on them.
import {
  Agent,
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  request,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { defineTool, type ElicitationResult, type Tool } from '@openmanus/core';
import { z } from 'zod';
import { type CatalogOptions, createMcpServer, definePrompt } from '../../src/index.js';

/** The reference server's 1×1 red PNG. */
const RED_PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

/** The reference server's minimal WAV file. */
const MINIMAL_WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';

const noArguments = z.object({});

/** A person's answer as the reference server words it. */
const elicited = (said: string, result: ElicitationResult) =>
  `${said}: action=${result.action}, content=${JSON.stringify(result.action === 'accept' ? result.content : {})}`;

const tools: Tool[] = [
  defineTool({
    name: 'test_simple_text',
    description: 'Tests simple text content response',
    parameters: noArguments,
    execute: () => 'This is a simple text response for testing.',
  }),
  defineTool({
    name: 'test_image_content',
    description: 'Tests image content response',
    parameters: noArguments,
    execute: () => ({ output: '', image: { base64: RED_PIXEL, mimeType: 'image/png' } }),
  }),
  defineTool({
    name: 'test_audio_content',
    description: 'Tests audio content response',
    parameters: noArguments,
    execute: () => ({
      output: 'A minimal WAV file.',
      content: [{ type: 'audio', data: MINIMAL_WAV, mimeType: 'audio/wav' }],
    }),
  }),
  defineTool({
    name: 'test_embedded_resource',
    description: 'Tests embedded resource content response',
    parameters: noArguments,
    execute: () => ({
      output: 'This is an embedded resource content.',
      content: [
        {
          type: 'resource',
          resource: {
            uri: 'test://embedded-resource',
            mimeType: 'text/plain',
            text: 'This is an embedded resource content.',
          },
        },
      ],
    }),
  }),
  defineTool({
    name: 'test_multiple_content_types',
    description: 'Tests response with multiple content types (text, image, resource)',
    parameters: noArguments,
    execute: () => ({
      output: 'Multiple content types test:',
      image: { base64: RED_PIXEL, mimeType: 'image/png' },
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: RED_PIXEL, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: {
            uri: 'test://mixed-content-resource',
            mimeType: 'application/json',
            text: JSON.stringify({ test: 'data', value: 123 }),
          },
        },
      ],
    }),
  }),
  defineTool({
    name: 'test_tool_with_logging',
    description: 'Tests tool that emits log messages during execution',
    parameters: noArguments,
    execute: (_, scope) => {
      scope.log('info', 'Tool execution started');
      scope.log('info', 'Tool processing data');
      scope.log('info', 'Tool execution completed');
      return 'Tool with logging executed successfully';
    },
  }),
  defineTool({
    name: 'test_tool_with_progress',
    description: 'Tests tool that reports progress notifications',
    parameters: noArguments,
    execute: (_, scope) => {
      for (const step of [0, 50, 100]) {
        scope.reportProgress({ progress: step, total: 100, message: `Completed step ${step} of 100` });
      }
      return 'Progress reported: 0, 50 and 100 of 100.';
    },
  }),
  defineTool({
    name: 'test_sampling',
    description: 'Tests server-initiated sampling (LLM completion request)',
    parameters: z.object({ prompt: z.string().describe('The prompt to send to the LLM') }),
    execute: async ({ prompt }, scope) => {
      const answer = await scope.sample({
        messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
        maxTokens: 100,
      });
      return `LLM response: ${answer.content.text}`;
    },
  }),
  defineTool({
    name: 'test_elicitation',
    description: 'Tests server-initiated elicitation (user input request)',
    parameters: z.object({ message: z.string().describe('The message to show the user') }),
    execute: async ({ message }, scope) =>
      elicited(
        'User response',
        await scope.elicit({
          message,
          schema: {
            type: 'object',
            properties: {
              username: { type: 'string', description: "User's response" },
              email: { type: 'string', description: "User's email address" },
            },
            required: ['username', 'email'],
          },
        }),
      ),
  }),
  defineTool({
    name: 'test_elicitation_sep1034_defaults',
    description: 'Tests elicitation with default values per SEP-1034',
    parameters: noArguments,
    execute: async (_, scope) =>
      elicited(
        'Elicitation completed',
        await scope.elicit({
          message: 'Please review and update the form fields with defaults',
          schema: {
            type: 'object',
            properties: {
              name: { type: 'string', description: 'User name', default: 'John Doe' },
              age: { type: 'integer', description: 'User age', default: 30 },
              score: { type: 'number', description: 'User score', default: 95.5 },
              status: {
                type: 'string',
                description: 'User status',
                enum: ['active', 'inactive', 'pending'],
                default: 'active',
              },
              verified: { type: 'boolean', description: 'Verification status', default: true },
            },
            required: [],
          },
        }),
      ),
  }),
  defineTool({
    name: 'test_elicitation_sep1330_enums',
    description: 'Tests elicitation with enum schema improvements per SEP-1330',
    parameters: noArguments,
    execute: async (_, scope) =>
      elicited(
        'Elicitation completed',
        await scope.elicit({
          message: 'Please select options from the enum fields',
          schema: {
            type: 'object',
            properties: {
              untitledSingle: {
                type: 'string',
                description: 'Select one option',
                enum: ['option1', 'option2', 'option3'],
              },
              titledSingle: {
                type: 'string',
                description: 'Select one option with titles',
                oneOf: [
                  { const: 'value1', title: 'First Option' },
                  { const: 'value2', title: 'Second Option' },
                  { const: 'value3', title: 'Third Option' },
                ],
              },
              legacyEnum: {
                type: 'string',
                description: 'Select one option (legacy)',
                enum: ['opt1', 'opt2', 'opt3'],
                enumNames: ['Option One', 'Option Two', 'Option Three'],
              },
              untitledMulti: {
                type: 'array',
                description: 'Select multiple options',
                minItems: 1,
                maxItems: 3,
                items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
              },
              titledMulti: {
                type: 'array',
                description: 'Select multiple options with titles',
                minItems: 1,
                maxItems: 3,
                items: {
                  anyOf: [
                    { const: 'value1', title: 'First Choice' },
                    { const: 'value2', title: 'Second Choice' },
                    { const: 'value3', title: 'Third Choice' },
                  ],
                },
              },
            },
            required: [],
          },
        }),
      ),
  }),
  defineTool({
    name: 'test_error_handling',
    description: 'Tests error response handling',
    parameters: noArguments,
    execute: () => {
      throw new Error('This tool intentionally returns an error for testing');
    },
  }),
  defineTool({
    // The reference closes the call's SSE stream mid-call, which is the transport's business, not a tool's.
    name: 'test_reconnection',
    description: 'Tests SSE stream disconnection and client reconnection (SEP-1699).',
    parameters: noArguments,
    execute: () =>
      'Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.',
  }),
  defineTool<{ name?: string; address?: { street?: string; city?: string } }>({
    name: 'json_schema_2020_12_tool',
    description: 'Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)',
    parameters: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: { address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
      properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
      additionalProperties: false,
    },
    execute: (args) => `JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}`,
  }),
];

/** Hop-by-hop headers: each side of the proxy has its own connection. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection']);
const endToEnd = (headers: IncomingHttpHeaders) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name)));

export interface ConformanceServer {
  /** The MCP endpoint the suite is pointed at. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Our server over streamable HTTP on 127.0.0.1, behind a proxy that adds its bearer token (the suite
 * sends no headers of its own), as a reverse proxy in front of it would. Everything else goes through
 * as sent, Host and Origin included: the proxy's own address is added with `allowedHosts` and
 * `allowedOrigins`, so the server's DNS-rebinding checks are the ones the suite meets.
 */
export async function startConformanceServer(): Promise<ConformanceServer> {
  const server = createMcpServer(tools, { name: 'openmanus-conformance', version: '1.0.0', ...conformanceCatalog });
  const agent = new Agent({ keepAlive: false });
  let upstream: URL | undefined;
  let token = '';

  const forward = (req: IncomingMessage, res: ServerResponse) => {
    const target = upstream as URL;
    const out = request(
      {
        agent,
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...endToEnd(req.headers), authorization: `Bearer ${token}` },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
        answer.pipe(res);
      },
    );
    // A refused request is answered before its body is read, so sending the body may fail: that is no error.
    out.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    // The suite hung up (an SSE stream it is done with): so does the proxy, upstream.
    res.on('close', () => out.destroy());
    req.pipe(out);
  };

  const proxy = createServer(forward);
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as AddressInfo;
  const names = ['127.0.0.1', 'localhost'];
  const serving = await server.serveHttp({
    port: 0,
    allowedHosts: names.map((name) => `${name}:${port}`),
    allowedOrigins: names.map((name) => `http://${name}:${port}`),
  });
  upstream = new URL(serving.url);
  token = serving.token;

  return {
    url: `http://127.0.0.1:${port}${upstream.pathname}`,
    async close() {
      const stopped = new Promise<void>((resolve) => proxy.close(() => resolve()));
      proxy.closeAllConnections();
      agent.destroy();
      await server.close();
      await stopped;
    },
  };
}

/**
 * The reference server's resources, resource template and prompts, as plain objects: its
 * subscriptions are our server's (per session), and completion comes with the catalog.
 */
export const conformanceCatalog: CatalogOptions = {
  resources: [
    {
      uri: 'test://static-text',
      name: 'static-text',
      title: 'Static Text Resource',
      description: 'A static text resource for testing',
      mimeType: 'text/plain',
      read: () => 'This is the content of the static text resource.',
    },
    {
      uri: 'test://static-binary',
      name: 'static-binary',
      title: 'Static Binary Resource',
      description: 'A static binary resource (image) for testing',
      mimeType: 'image/png',
      read: () => ({ blob: RED_PIXEL }),
    },
    {
      uri: 'test://watched-resource',
      name: 'watched-resource',
      title: 'Watched Resource',
      description: 'A resource that auto-updates every 3 seconds',
      mimeType: 'text/plain',
      read: () => 'Watched resource content',
    },
  ],
  resourceTemplates: [
    {
      uriTemplate: 'test://template/{id}/data',
      name: 'template',
      title: 'Resource Template',
      description: 'A resource template with parameter substitution',
      mimeType: 'application/json',
      read: (_uri, { id }) => JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
    },
  ],
  prompts: [
    {
      name: 'test_simple_prompt',
      title: 'Simple Test Prompt',
      description: 'A simple prompt without arguments',
      get: () => 'This is a simple prompt for testing.',
    },
    definePrompt({
      name: 'test_prompt_with_arguments',
      title: 'Prompt With Arguments',
      description: 'A prompt with required arguments',
      arguments: z.object({
        arg1: z.string().describe('First test argument'),
        arg2: z.string().describe('Second test argument'),
      }),
      get: ({ arg1, arg2 }) => `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'`,
    }),
    definePrompt({
      name: 'test_prompt_with_embedded_resource',
      title: 'Prompt With Embedded Resource',
      description: 'A prompt that includes an embedded resource',
      arguments: z.object({ resourceUri: z.string().describe('URI of the resource to embed') }),
      get: ({ resourceUri }) => [
        {
          content: {
            type: 'resource',
            resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' },
          },
        },
        { content: 'Please process the embedded resource above.' },
      ],
    }),
    {
      name: 'test_prompt_with_image',
      title: 'Prompt With Image',
      description: 'A prompt that includes image content',
      get: () => [
        { content: { type: 'image', data: RED_PIXEL, mimeType: 'image/png' } },
        { content: 'Please analyze the image above.' },
      ],
    },
  ],
};
