import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Agent, createAgent, defineTool, type ElicitationForm } from '@openmanus/core';
import { scriptedLlm } from '@openmanus/core/testing';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createServer, fastifyPlugin, type ServerOptions } from '../src/index.js';

const TOKEN = 'test-token-0123456789abcdef';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const deployed: string[] = [];
const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys a service',
  parameters: z.object({ service: z.string() }),
  execute: async ({ service }) => {
    deployed.push(service);
    return `deployed ${service}`;
  },
});

const agent = (): Agent => createAgent({ name: 'ops', tools: [deploy] });
const script = () =>
  scriptedLlm([{ toolCalls: [{ name: 'deploy', arguments: { service: 'api' } }] }, { content: 'Deployed the api.' }]);

async function setup(more: Partial<ServerOptions> = {}) {
  const dataDir = await mkdtemp(join(tmpdir(), 'openmanus-server-'));
  const server = await createServer({
    agents: { ops: agent() },
    llm: script(),
    approvals: ['deploy'],
    dataDir,
    token: TOKEN,
    log: () => undefined,
    ...more,
  });
  cleanups.push(async () => {
    await server.idle();
    await server.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  return server;
}

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read loosely, as a client would
type JsonObject = Record<string, any>;

const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const until = async (condition: () => Promise<boolean>) => {
  while (!(await condition())) await new Promise((resolve) => setImmediate(resolve));
};

describe('createServer', () => {
  it('runs an agent through its fetch handler: start, pause for approval, approve, trace, state, diff', async () => {
    const server = await setup();
    const call = async (method: string, path: string, body?: object) => {
      const response = await server.fetch(
        new Request(`http://127.0.0.1${path}`, {
          method,
          headers: auth,
          ...(body ? { body: JSON.stringify(body) } : {}),
        }),
      );
      return { status: response.status, json: (await response.json()) as JsonObject };
    };
    const { status, json } = await call('POST', '/runs', { task: 'deploy the api' });
    expect(status).toBe(202);
    const id = json.id as string;
    await until(async () => (await call('GET', `/runs/${id}`)).json.status === 'awaiting_approval');
    const run = (await call('GET', `/runs/${id}`)).json;
    expect(run).toMatchObject({ agent: 'ops', pending: [{ kind: 'approval', tool: 'deploy' }] });
    expect((await call('POST', `/runs/${id}/approve`, { effectId: run.pending[0].effectId })).status).toBe(202);
    await server.idle();
    expect((await call('GET', `/runs/${id}`)).json).toMatchObject({ status: 'finished', answer: 'Deployed the api.' });

    const trace = (await call('GET', `/runs/${id}/trace`)).json;
    expect(trace.modelCalls).toHaveLength(2);
    expect(trace.modelCalls[0]).toMatchObject({ sent: { tools: expect.arrayContaining(['deploy']) } });
    expect(trace.toolCalls).toMatchObject([{ tool: 'deploy', args: '{"service":"api"}', result: 'deployed api' }]);
    expect(trace.transitions.map((t: { event: string }) => t.event)).toContain('approvalGiven');

    const sent = (await call('GET', `/runs/${id}/model-calls/${trace.modelCalls[0].effectId}`)).json;
    expect(sent.messages.some((m: { content: string }) => m.content === 'deploy the api')).toBe(true);

    const last = trace.transitions.at(-1).n as number;
    const state = (await call('GET', `/runs/${id}/transitions/${last}`)).json;
    expect(state.state).toMatchObject({ status: 'finished', answer: 'Deployed the api.' });
    const diff = (await call('GET', `/runs/${id}/diff?from=1&to=${last}`)).json;
    expect(diff.changes.some((c: { path: string }) => c.path === 'status')).toBe(true);

    // The recorded run re-runs exactly through the same agent, and diverges with another prompt.
    expect((await call('POST', `/runs/${id}/replay`, {})).json).toMatchObject({ diverged: null, matched: last });
    expect(await call('POST', `/runs/${id}/replay`, { model: 'other' })).toMatchObject({
      status: 400,
      json: { error: expect.stringMatching(/body must be/) },
    });
    const changed = (await call('POST', `/runs/${id}/replay`, { systemPrompt: 'Be terse.' })).json;
    expect(changed.diverged).toMatchObject({ transition: 1, event: 'started' });
  });

  it('forks a run from a transition onto another model', async () => {
    const other = scriptedLlm([{ content: 'Not deploying after all.' }]);
    const server = await setup({ approvals: [], models: { other } });
    const headers = auth;
    const post = (path: string, body: object) =>
      server.fetch(new Request(`http://127.0.0.1${path}`, { method: 'POST', headers, body: JSON.stringify(body) }));
    const get = async (path: string) =>
      (await (await server.fetch(new Request(`http://127.0.0.1${path}`, { headers }))).json()) as JsonObject;
    const { id } = (await (await post('/runs', { task: 'deploy the api' })).json()) as { id: string };
    await server.idle();
    // Transition 1 is the task: the fork asks the other model from there.
    const forkedResponse = await post(`/runs/${id}/fork`, { transition: 1, model: 'other' });
    const forked = (await forkedResponse.json()) as { id: string };
    expect(forked).toHaveProperty('id');
    await server.idle();
    expect(await get(`/runs/${forked.id}`)).toMatchObject({ status: 'finished', answer: 'Not deploying after all.' });
    const { runs } = await get('/runs');
    expect(runs.find((r: { id: string }) => r.id === forked.id)).toMatchObject({
      forkedFrom: { runId: id, transition: 1 },
      model: other.model,
    });
  });

  it('refuses requests without the token, from another origin, for another host, or not JSON', async () => {
    const server = await setup();
    const ask = (headers: Record<string, string>, method = 'GET') =>
      server.fetch(
        new Request('http://127.0.0.1:1234/runs', {
          method,
          headers,
          ...(method === 'POST' ? { body: '{"task":"x"}' } : {}),
        }),
      );
    expect((await ask({ host: '127.0.0.1:1234' })).status).toBe(401);
    expect((await ask({ ...auth, host: 'evil.example:1234' })).status).toBe(421);
    expect((await ask({ ...auth, origin: 'http://evil.example' })).status).toBe(403);
    expect((await ask({ authorization: auth.authorization, 'content-type': 'text/plain' }, 'POST')).status).toBe(415);
    expect((await ask(auth)).status).toBe(200);
  });

  it('shows each principal only its own runs with an authorize hook', async () => {
    const server = await setup({
      authorize: (request) => request.headers.get('x-user') ?? undefined,
    });
    const as = (user: string | undefined, path: string, body?: object) =>
      server.fetch(
        new Request(`http://127.0.0.1${path}`, {
          method: body ? 'POST' : 'GET',
          headers: { 'content-type': 'application/json', ...(user ? { 'x-user': user } : {}) },
          ...(body ? { body: JSON.stringify(body) } : {}),
        }),
      );
    const { id } = (await (await as('alice', '/runs', { task: 'deploy the api' })).json()) as { id: string };
    await server.idle();
    expect((await as('alice', `/runs/${id}`)).status).toBe(200);
    expect((await as('bob', `/runs/${id}`)).status).toBe(404);
    expect((await as('bob', `/runs/${id}/trace`)).status).toBe(404);
    expect(((await (await as('bob', '/runs')).json()) as { runs: unknown[] }).runs).toEqual([]);
    expect((await as(undefined, '/runs')).status).toBe(401);
  });

  it('mounts in Fastify and in Hono, streaming events over SSE', async () => {
    const server = await setup({ approvals: [] });
    const fastify = Fastify();
    await fastify.register(fastifyPlugin(server), { prefix: '/agents' });
    await fastify.listen({ port: 0, host: '127.0.0.1' });
    cleanups.push(() => fastify.close());
    const address = fastify.server.address() as { port: number };
    const base = `http://127.0.0.1:${address.port}/agents`;
    const started = await fetch(`${base}/runs`, { method: 'POST', headers: auth, body: '{"task":"deploy the api"}' });
    expect(started.status).toBe(202);
    const { id } = (await started.json()) as { id: string };
    const text = await (await fetch(`${base}/runs/${id}/events`, { headers: auth })).text();
    expect(text).toContain('"type":"ended"');
    expect((await fetch(`${base}/studio/`)).headers.get('content-security-policy')).toContain("default-src 'none'");

    const hono = new Hono();
    hono.mount('/agents', server.fetch);
    const listed = await hono.request('http://127.0.0.1/agents/runs', { headers: auth });
    expect(((await listed.json()) as { runs: { id: string }[] }).runs.map((r) => r.id)).toContain(id);
  });
  it('keeps a quiet event stream open with heartbeat comments while a tool works', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const wait = defineTool({
      name: 'wait',
      description: 'Waits for the test',
      parameters: z.object({}),
      execute: async () => {
        await gate;
        return 'done waiting';
      },
    });
    const server = await setup({
      agents: { slow: createAgent({ name: 'slow', tools: [wait] }) },
      llm: scriptedLlm([{ toolCalls: [{ name: 'wait', arguments: {} }] }, { content: 'Waited.' }]),
      approvals: [],
      heartbeatMs: 20,
    });
    const started = await server.fetch(
      new Request('http://127.0.0.1/runs', { method: 'POST', headers: auth, body: '{"task":"wait"}' }),
    );
    const { id } = (await started.json()) as { id: string };
    const events = await server.fetch(new Request(`http://127.0.0.1/runs/${id}/events`, { headers: auth }));
    const reader = (events.body as ReadableStream<Uint8Array>).pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes(': heartbeat\n\n')) text += (await reader.read()).value ?? '';
    release();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += chunk.value;
    expect(text).toMatch(/"type":"ended"/);
    // Refused before anything is written to the data directory.
    const nowhere = join(tmpdir(), 'openmanus-never-made');
    await expect(
      createServer({ agents: { ops: agent() }, llm: script(), dataDir: nowhere, heartbeatMs: 0 }),
    ).rejects.toThrow(/heartbeatMs/);
    await expect(stat(nowhere)).rejects.toThrow(/ENOENT/);
  });
  it('lists runs a page at a time, newest first, and refuses a query it cannot take', async () => {
    const server = await setup({
      approvals: [],
      llm: scriptedLlm(Array.from({ length: 7 }, (_, i) => ({ content: `answer ${i}` }))),
    });
    const get = async (query: string) => {
      const response = await server.fetch(new Request(`http://127.0.0.1/runs${query}`, { headers: auth }));
      return { status: response.status, json: (await response.json()) as JsonObject };
    };
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const response = await server.fetch(
        new Request('http://127.0.0.1/runs', {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ task: `task ${i}` }),
        }),
      );
      ids.push(((await response.json()) as { id: string }).id);
      await server.idle();
    }
    const pages: string[][] = [];
    let next: number | undefined = 0;
    while (next !== undefined) {
      const { json } = await get(`?limit=3&offset=${next}`);
      pages.push(json.runs.map((run: { id: string }) => run.id));
      next = json.next;
    }
    expect(pages.map((page) => page.length)).toEqual([3, 3, 1]);
    expect(pages.flat()).toEqual([...ids].reverse());
    const found = await get('?q=TASK%204&status=finished');
    expect(found.json.runs.map((run: { id: string }) => run.id)).toEqual([ids[4]]);
    expect(found.json.next).toBeUndefined();
    for (const bad of ['?limit=0', '?limit=1000', '?offset=-1', '?limit=two'])
      expect(await get(bad)).toMatchObject({ status: 400, json: { error: expect.stringMatching(/query must be/) } });
  });
  it('opens runs of agents it does not serve (a studio over another app), naming the model each started with', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'openmanus-server-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const first = await setup({ dataDir });
    const ask = (server: typeof first, path: string, init: RequestInit = {}) =>
      server.fetch(new Request(`http://127.0.0.1${path}`, { headers: auth, ...init }));
    const { id } = (await (
      await ask(first, '/runs', { method: 'POST', body: '{"task":"deploy the api"}' })
    ).json()) as {
      id: string;
    };
    await first.idle();
    const startedWith = script().model;
    await first.close();

    const other = scriptedLlm([{ content: 'unused' }], 'another-model');
    const second = await setup({ dataDir, agents: { notes: createAgent({ name: 'notes' }) }, llm: other });
    expect(other.model).not.toBe(startedWith);
    const { runs } = (await (await ask(second, '/runs')).json()) as JsonObject;
    expect(runs).toMatchObject([{ id, agent: 'ops', model: startedWith, status: 'awaiting_approval' }]);
    const view = await ask(second, `/runs/${id}`);
    expect(view.status).toBe(200);
    expect(await view.json()).toMatchObject({ agent: 'ops', status: 'awaiting_approval' });
    expect((await ask(second, `/runs/${id}/trace`)).status).toBe(200);
    // Reading it is all: going on needs the agent.
    const approve = await ask(second, `/runs/${id}/approve`, { method: 'POST', body: '{"effectId":"x"}' });
    expect(approve.status).toBe(409);
  });

  it('serves the studio to GET and HEAD only, and redirects to it relative to wherever it is mounted', async () => {
    const server = await setup();
    const at = (path: string, init: RequestInit = {}) => server.fetch(new Request(`http://127.0.0.1${path}`, init));
    expect((await at('/studio/', { method: 'HEAD' })).status).toBe(200);
    expect((await at('/studio/', { method: 'POST', headers: auth, body: '{}' })).status).toBe(405);
    const redirect = await at('/studio');
    expect(redirect.status).toBe(308);
    expect(new URL(redirect.headers.get('location') ?? '', 'http://127.0.0.1/agents/studio').pathname).toBe(
      '/agents/studio/',
    );
  });
});

describe('a question with a form (an MCP server’s, from a tool that paused on it)', () => {
  const FORM: ElicitationForm = {
    message: 'How many people?',
    schema: { type: 'object', properties: { people: { type: 'integer' } }, required: ['people'] },
  };
  const book = defineTool({
    name: 'book',
    description: 'Books a table',
    parameters: z.object({}),
    execute: (_, scope) => {
      if (scope.answer?.type === 'humanReplied') return `booked: ${scope.answer.answer}`;
      const call = { id: scope.callId, name: 'book', arguments: '{}' };
      return {
        suspend: {
          progress: null,
          waiting: [{ kind: 'human', effectId: 'elicit-1', question: 'How many people?', call, form: FORM }],
        },
      };
    },
  });

  it('is listed with its form, and answered over HTTP with the fields as JSON', async () => {
    const server = await setup({
      agents: { ops: createAgent({ name: 'ops', tools: [book] }) },
      llm: scriptedLlm([{ toolCalls: [{ name: 'book', arguments: {} }] }, { content: 'Booked.' }]),
    });
    const call = async (method: string, path: string, body?: object) => {
      const init = { method, headers: auth, ...(body ? { body: JSON.stringify(body) } : {}) };
      const response = await server.fetch(new Request(`http://127.0.0.1${path}`, init));
      return (await response.json()) as JsonObject;
    };
    const { id } = await call('POST', '/runs', { task: 'book a table' });
    await until(async () => (await call('GET', `/runs/${id}`)).status === 'awaiting_human');
    const run = await call('GET', `/runs/${id}`);
    expect(run.pending).toEqual([expect.objectContaining({ kind: 'human', question: 'How many people?', form: FORM })]);
    await call('POST', `/runs/${id}/messages`, { text: '{"people": 2}' });
    await server.idle();
    const done = await call('GET', `/runs/${id}`);
    expect(JSON.stringify(done.timeline)).toContain('booked: {\\"people\\": 2}');
  });
});
