// Resources, resource templates, prompts and completion served by createMcpServer, driven by the
// official SDK client over an in-memory pair and over streamable HTTP on 127.0.0.1.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  ErrorCode,
  McpError,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createMcpServer,
  definePrompt,
  type McpPrompt,
  type McpResource,
  type McpResourceTemplate,
  type McpToolServer,
  RESOURCE_NOT_FOUND,
} from '../src/index.js';
import { eventually, httpClient } from './helpers.js';

const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

const resources: McpResource[] = [
  { uri: 'memo://greeting', name: 'greeting', title: 'Greeting', mimeType: 'text/plain', read: () => 'Hello.' },
  { uri: 'memo://bytes', name: 'bytes', mimeType: 'application/octet-stream', read: () => new Uint8Array([0, 1, 255]) },
  { uri: 'memo://pixel', name: 'pixel', read: () => ({ blob: PIXEL, mimeType: 'image/png' }) },
  {
    uri: 'memo://broken',
    name: 'broken',
    read: () => {
      throw new Error('the disk is gone');
    },
  },
  { uri: 'memo://huge', name: 'huge', read: () => 'x'.repeat(2_000) },
];

const notes: Record<string, string> = { 'a b': 'Note with a space.', ünïcode: 'Note ü.', plain: 'Plain note.' };
const resourceTemplates: McpResourceTemplate[] = [
  {
    uriTemplate: 'notes://{name}',
    name: 'note',
    description: 'A note by its name',
    mimeType: 'text/markdown',
    read: (_uri, { name = '' }) => {
      const note = notes[name];
      if (note === undefined) throw new Error(`no note named ${name}`);
      return note;
    },
    list: () => Object.keys(notes).map((name) => ({ uri: `notes://${encodeURIComponent(name)}`, name })),
    complete: { name: (value) => Object.keys(notes).filter((name) => name.startsWith(value)) },
  },
  {
    uriTemplate: 'users://{user}/repos/{repo}',
    name: 'repo',
    read: (_uri, vars) => ({ text: JSON.stringify(vars), mimeType: 'application/json' }),
    complete: {
      repo: (value, { arguments: filled }) => [
        `${filled.user ?? 'nobody'}/${value}-one`,
        `${filled.user ?? 'nobody'}/${value}-two`,
      ],
    },
  },
];

const prompts: McpPrompt[] = [
  { name: 'hello', description: 'Says hello', get: () => 'Hello there.' },
  definePrompt({
    name: 'translate',
    title: 'Translate',
    description: 'Translates a text',
    arguments: z.object({
      text: z.string().describe('What to translate'),
      language: z.enum(['French', 'German', 'Finnish']).optional().describe('Into which language'),
    }),
    get: ({ text, language = 'French' }) => [
      { content: `Translate into ${language}:` },
      { role: 'assistant', content: 'Gladly.' },
      { content: { type: 'text', text } },
    ],
  }),
  {
    name: 'show',
    description: 'An image and an embedded resource',
    arguments: [{ name: 'uri', description: 'What to embed', required: true }, { name: 'note' }],
    get: ({ uri = '', note }) => ({
      description: `Showing ${uri}`,
      messages: [
        { content: { type: 'image', data: PIXEL, mimeType: 'image/png' } },
        { content: { type: 'resource', resource: { uri, mimeType: 'text/plain', text: note ?? 'no note' } } },
      ],
    }),
    complete: { uri: () => Array.from({ length: 150 }, (_, index) => `memo://${index}`) },
  },
  {
    name: 'bad',
    description: 'Gives a message MCP has no word for',
    get: () => [{ content: { type: 'video' } as never }],
  },
];

const servers: McpToolServer[] = [];
const clients: Client[] = [];
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((client) => client.close()));
  await Promise.allSettled(servers.splice(0).map((server) => server.close()));
});

const serve = (options: Parameters<typeof createMcpServer>[1] = {}) => {
  const server = createMcpServer([], { resources, resourceTemplates, prompts, maxResourceBytes: 1_000, ...options });
  servers.push(server);
  return server;
};

/** An SDK client connected to `server` over an in-memory pair. */
async function inMemory(server: McpToolServer): Promise<Client> {
  const [ours, theirs] = InMemoryTransport.createLinkedPair();
  await server.connect(ours);
  const client = new Client({ name: 'catalog-test', version: '1.0.0' });
  await client.connect(theirs);
  clients.push(client);
  return client;
}

async function overHttp(server: McpToolServer): Promise<Client> {
  const serving = await server.serveHttp({ port: 0 });
  const { client } = await httpClient(serving.url, serving.token);
  clients.push(client);
  return client;
}

/** The MCP error a request fails with. */
async function failure(request: Promise<unknown>): Promise<McpError> {
  const error = await request.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}

describe('resources', () => {
  it('declares the capabilities and lists the resources, those a template lists, and the templates', async () => {
    const client = await inMemory(serve());
    expect(client.getServerCapabilities()).toMatchObject({
      tools: {},
      resources: { subscribe: true, listChanged: true },
      prompts: { listChanged: true },
      completions: {},
    });
    const { resources: listed } = await client.listResources();
    expect(listed.map((resource) => resource.uri)).toEqual([
      'memo://greeting',
      'memo://bytes',
      'memo://pixel',
      'memo://broken',
      'memo://huge',
      'notes://a%20b',
      'notes://%C3%BCn%C3%AFcode',
      'notes://plain',
    ]);
    expect(listed[0]).toEqual({ uri: 'memo://greeting', name: 'greeting', title: 'Greeting', mimeType: 'text/plain' });
    const { resourceTemplates: templates } = await client.listResourceTemplates();
    expect(templates).toEqual([
      { uriTemplate: 'notes://{name}', name: 'note', description: 'A note by its name', mimeType: 'text/markdown' },
      { uriTemplate: 'users://{user}/repos/{repo}', name: 'repo' },
    ]);
  });

  it('reads text, bytes as a base64 blob, and a template’s resources with their variables decoded', async () => {
    const client = await inMemory(serve());
    expect((await client.readResource({ uri: 'memo://greeting' })).contents).toEqual([
      { uri: 'memo://greeting', mimeType: 'text/plain', text: 'Hello.' },
    ]);
    expect((await client.readResource({ uri: 'memo://bytes' })).contents).toEqual([
      { uri: 'memo://bytes', mimeType: 'application/octet-stream', blob: Buffer.from([0, 1, 255]).toString('base64') },
    ]);
    expect((await client.readResource({ uri: 'memo://pixel' })).contents).toEqual([
      { uri: 'memo://pixel', mimeType: 'image/png', blob: PIXEL },
    ]);
    expect((await client.readResource({ uri: 'notes://%C3%BCn%C3%AFcode' })).contents).toEqual([
      { uri: 'notes://%C3%BCn%C3%AFcode', mimeType: 'text/markdown', text: 'Note ü.' },
    ]);
    expect((await client.readResource({ uri: 'users://ada/repos/engine' })).contents).toEqual([
      { uri: 'users://ada/repos/engine', mimeType: 'application/json', text: '{"user":"ada","repo":"engine"}' },
    ]);
  });

  it('answers a read that throws, an unknown URI, a result over the limit and an absurd variable with MCP errors; the session goes on', async () => {
    const client = await inMemory(serve());
    const broken = await failure(client.readResource({ uri: 'memo://broken' }));
    expect(broken.code).toBe(ErrorCode.InternalError);
    expect(broken.message).toContain('the disk is gone');
    expect((await failure(client.readResource({ uri: 'notes://missing' }))).message).toContain('no note named missing');

    const unknown = await failure(client.readResource({ uri: 'memo://nothing' }));
    expect(unknown.code).toBe(RESOURCE_NOT_FOUND);
    expect(unknown.message).toContain('Resource memo://nothing not found');

    const huge = await failure(client.readResource({ uri: 'memo://huge' }));
    expect(huge.message).toContain('The resource memo://huge is 2000 bytes; this server sends at most 1000 bytes');

    const absurd = await failure(client.readResource({ uri: `notes://${'n'.repeat(10_001)}` }));
    expect(absurd.code).toBe(ErrorCode.InvalidParams);
    expect(absurd.message).toContain(
      'the name of notes://{name} is 10001 characters long; this server takes at most 10000',
    );
    const badEscape = await failure(client.readResource({ uri: 'notes://%E0%A4%A' }));
    expect(badEscape.message).toContain('is not percent-encoded');

    expect((await client.readResource({ uri: 'notes://plain' })).contents[0]).toMatchObject({ text: 'Plain note.' });
    expect(await client.ping()).toEqual({});
  });

  it('sends notifications/resources/updated only to the sessions subscribed to that URI, until they unsubscribe', async () => {
    const server = serve();
    const [first, second] = [await inMemory(server), await inMemory(server)];
    const seen = { first: [] as string[], second: [] as string[] };
    first.setNotificationHandler(ResourceUpdatedNotificationSchema, ({ params }) => void seen.first.push(params.uri));
    second.setNotificationHandler(ResourceUpdatedNotificationSchema, ({ params }) => void seen.second.push(params.uri));
    await first.subscribeResource({ uri: 'memo://greeting' });
    await first.subscribeResource({ uri: 'notes://plain' });
    await second.subscribeResource({ uri: 'notes://plain' });
    expect((await failure(first.subscribeResource({ uri: 'memo://nothing' }))).code).toBe(RESOURCE_NOT_FOUND);

    await server.notifyResourceUpdated('memo://greeting');
    await server.notifyResourceUpdated('memo://bytes'); // nobody subscribed
    await server.notifyResourceUpdated('notes://plain');
    // Each session's notifications come in order: once the last is in, any earlier one would be too.
    await eventually(() => seen.first.length === 2 && seen.second.length === 1);
    expect(seen).toEqual({ first: ['memo://greeting', 'notes://plain'], second: ['notes://plain'] });

    await first.unsubscribeResource({ uri: 'memo://greeting' });
    await server.notifyResourceUpdated('memo://greeting');
    await server.notifyResourceUpdated('notes://plain');
    await eventually(() => seen.first.length === 3 && seen.second.length === 2);
    expect(seen).toEqual({
      first: ['memo://greeting', 'notes://plain', 'notes://plain'],
      second: ['notes://plain', 'notes://plain'],
    });

    // A session that ended is forgotten, and the others still hear.
    await first.close();
    await server.notifyResourceUpdated('notes://plain');
    await eventually(() => seen.second.length === 3);
    expect(seen.first).toHaveLength(3);
  });

  it('tells every session when the lists change; lists given as functions are read again', async () => {
    const shelf: McpResource[] = [{ uri: 'memo://one', name: 'one', read: () => 'one' }];
    const menu: McpPrompt[] = [{ name: 'first', get: () => 'first' }];
    const server = serve({ resources: () => shelf, resourceTemplates: [], prompts: () => menu });
    const [first, second] = [await inMemory(server), await inMemory(server)];
    const changes: string[] = [];
    for (const [name, client] of [
      ['first', first],
      ['second', second],
    ] as const) {
      client.setNotificationHandler(
        ResourceListChangedNotificationSchema,
        () => void changes.push(`${name}: resources`),
      );
      client.setNotificationHandler(PromptListChangedNotificationSchema, () => void changes.push(`${name}: prompts`));
    }
    shelf.push({ uri: 'memo://two', name: 'two', read: () => 'two' });
    await server.notifyResourcesChanged();
    menu.push({ name: 'second', get: () => 'second' });
    await server.notifyPromptsChanged();
    await eventually(() => changes.length === 4);
    expect(changes.sort()).toEqual(['first: prompts', 'first: resources', 'second: prompts', 'second: resources']);
    expect((await second.listResources()).resources.map((resource) => resource.uri)).toEqual([
      'memo://one',
      'memo://two',
    ]);
    expect((await second.readResource({ uri: 'memo://two' })).contents[0]).toMatchObject({ text: 'two' });
    expect((await first.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual(['first', 'second']);
  });

  it('refuses, when the server is made, two resources with one URI or a template it cannot parse', () => {
    const read = () => '';
    expect(() =>
      createMcpServer([], {
        resources: [
          { uri: 'a://x', name: 'x', read },
          { uri: 'a://x', name: 'y', read },
        ],
      }),
    ).toThrow('Two resources are named a://x');
    expect(() => createMcpServer([], { resourceTemplates: [{ uriTemplate: 'a://{x', name: 'x', read }] })).toThrow(
      'The resource template x (a://{x): Unclosed template expression',
    );
    expect(() =>
      createMcpServer([], {
        prompts: [
          { name: 'p', get: read },
          { name: 'p', get: read },
        ],
      }),
    ).toThrow('Two prompts are named p');
  });
});

describe('prompts', () => {
  it('lists the prompts with their arguments, from a zod object or as given', async () => {
    const client = await inMemory(serve());
    expect((await client.listPrompts()).prompts).toEqual([
      { name: 'hello', description: 'Says hello' },
      {
        name: 'translate',
        title: 'Translate',
        description: 'Translates a text',
        arguments: [
          { name: 'text', description: 'What to translate', required: true },
          { name: 'language', description: 'Into which language', required: false },
        ],
      },
      {
        name: 'show',
        description: 'An image and an embedded resource',
        arguments: [{ name: 'uri', description: 'What to embed', required: true }, { name: 'note' }],
      },
      { name: 'bad', description: 'Gives a message MCP has no word for' },
    ]);
  });

  it('gets text, messages of both roles, an image and an embedded resource', async () => {
    const client = await inMemory(serve());
    expect(await client.getPrompt({ name: 'hello' })).toEqual({
      description: 'Says hello',
      messages: [{ role: 'user', content: { type: 'text', text: 'Hello there.' } }],
    });
    const translated = await client.getPrompt({
      name: 'translate',
      arguments: { text: 'Good morning', language: 'Finnish' },
    });
    expect(translated.messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'Translate into Finnish:' } },
      { role: 'assistant', content: { type: 'text', text: 'Gladly.' } },
      { role: 'user', content: { type: 'text', text: 'Good morning' } },
    ]);
    expect(await client.getPrompt({ name: 'show', arguments: { uri: 'memo://greeting' } })).toEqual({
      description: 'Showing memo://greeting',
      messages: [
        { role: 'user', content: { type: 'image', data: PIXEL, mimeType: 'image/png' } },
        {
          role: 'user',
          content: { type: 'resource', resource: { uri: 'memo://greeting', mimeType: 'text/plain', text: 'no note' } },
        },
      ],
    });
  });

  it('refuses missing or invalid arguments, an absurd one, an unknown prompt and a message MCP cannot carry', async () => {
    const client = await inMemory(serve());
    const missing = await failure(client.getPrompt({ name: 'show', arguments: {} }));
    expect(missing.code).toBe(ErrorCode.InvalidParams);
    expect(missing.message).toContain('The prompt show needs the argument uri');
    const invalid = await failure(
      client.getPrompt({ name: 'translate', arguments: { text: 'x', language: 'Klingon' } }),
    );
    expect(invalid.code).toBe(ErrorCode.InvalidParams);
    expect(invalid.message).toContain('Invalid arguments for the prompt translate');
    expect(invalid.message).toContain('language');
    const absurd = await failure(client.getPrompt({ name: 'translate', arguments: { text: 'x'.repeat(10_001) } }));
    expect(absurd.message).toContain('The argument text of translate is 10001 characters long');
    expect((await failure(client.getPrompt({ name: 'nothing' }))).message).toContain('Prompt nothing not found');
    const bad = await failure(client.getPrompt({ name: 'bad' }));
    expect(bad.code).toBe(ErrorCode.InternalError);
    expect(bad.message).toContain('The prompt bad gave an invalid message 1');
    const big = await failure(
      client.getPrompt({ name: 'show', arguments: { uri: 'memo://x', note: 'n'.repeat(2_000) } }),
    );
    expect(big.message).toContain('this server sends at most 1000 bytes of a prompt');
  });
});

describe('completion', () => {
  it('completes prompt arguments (a z.enum by itself) and template variables, with what is filled in', async () => {
    const client = await inMemory(serve());
    expect(
      await client.complete({
        ref: { type: 'ref/prompt', name: 'translate' },
        argument: { name: 'language', value: 'F' },
      }),
    ).toEqual({ completion: { values: ['French', 'Finnish'], total: 2, hasMore: false } });
    expect(
      await client.complete({ ref: { type: 'ref/prompt', name: 'translate' }, argument: { name: 'text', value: 'a' } }),
    ).toEqual({ completion: { values: [], total: 0, hasMore: false } });
    expect(
      await client.complete({
        ref: { type: 'ref/resource', uri: 'notes://{name}' },
        argument: { name: 'name', value: 'p' },
      }),
    ).toEqual({ completion: { values: ['plain'], total: 1, hasMore: false } });
    expect(
      await client.complete({
        ref: { type: 'ref/resource', uri: 'users://{user}/repos/{repo}' },
        argument: { name: 'repo', value: 'eng' },
        context: { arguments: { user: 'ada' } },
      }),
    ).toEqual({ completion: { values: ['ada/eng-one', 'ada/eng-two'], total: 2, hasMore: false } });
  });

  it('sends at most 100 values, and refuses unknown references and absurd values', async () => {
    const client = await inMemory(serve());
    const many = await client.complete({
      ref: { type: 'ref/prompt', name: 'show' },
      argument: { name: 'uri', value: '' },
    });
    expect(many.completion.values).toHaveLength(100);
    expect(many.completion).toMatchObject({ total: 150, hasMore: true });
    const unknown = await failure(
      client.complete({ ref: { type: 'ref/resource', uri: 'nope://{x}' }, argument: { name: 'x', value: '' } }),
    );
    expect(unknown.message).toContain('Resource template nope://{x} not found');
    const absurd = await failure(
      client.complete({
        ref: { type: 'ref/prompt', name: 'translate' },
        argument: { name: 'language', value: 'F'.repeat(10_001) },
      }),
    );
    expect(absurd.code).toBe(ErrorCode.InvalidParams);
    const absurdContext = await failure(
      client.complete({
        ref: { type: 'ref/resource', uri: 'users://{user}/repos/{repo}' },
        argument: { name: 'repo', value: 'e' },
        context: { arguments: { user: 'u'.repeat(10_001) } },
      }),
    );
    expect(absurdContext.message).toContain('The argument user given is 10001 characters long');
  });
});

describe('over streamable HTTP', () => {
  it('lists, reads, gets and completes, and a subscribed session hears of an update', async () => {
    const server = serve();
    const client = await overHttp(server);
    expect((await client.listResources()).resources).toHaveLength(8);
    expect((await client.readResource({ uri: 'notes://a%20b' })).contents[0]).toMatchObject({
      text: 'Note with a space.',
    });
    expect((await client.getPrompt({ name: 'hello' })).messages).toHaveLength(1);
    expect(
      (
        await client.complete({
          ref: { type: 'ref/prompt', name: 'translate' },
          argument: { name: 'language', value: 'G' },
        })
      ).completion.values,
    ).toEqual(['German']);
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, ({ params }) => void updated.push(params.uri));
    await client.subscribeResource({ uri: 'memo://greeting' });
    // The notification travels on the client's GET stream, which it opens on its own after connecting:
    // notified until it is heard.
    await eventually(async () => {
      await server.notifyResourceUpdated('memo://greeting');
      return updated.length > 0;
    });
    expect(new Set(updated)).toEqual(new Set(['memo://greeting']));
  });
});
