import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scriptedLlm } from '@openmanus/core/testing';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';

/** What the tests read of a run's view. */
interface RunView {
  readonly status: string;
  readonly pending: readonly { readonly kind: string; readonly effectId: string; readonly tool?: string }[];
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The app on a free port of 127.0.0.1, with a model that deploys the api, then says so. */
async function start() {
  const dataDir = await mkdtemp(join(tmpdir(), 'server-fastify-'));
  const llm = scriptedLlm([
    { toolCalls: [{ name: 'deploy', arguments: { service: 'api' } }] },
    { content: 'The api is deployed.' },
  ]);
  const { app, server } = await buildApp(llm, dataDir);
  // A route of the app's own, added after the plugin: Fastify still parses its JSON body.
  app.post('/echo', async (request) => ({ echoed: request.body }));
  const origin = await app.listen({ port: 0, host: '127.0.0.1' });
  cleanups.push(async () => {
    await app.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  const token = server.token?.value ?? '';
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const api = async <T = unknown>(path: string, body?: object) => {
    const response = await fetch(`${origin}/agents${path}`, {
      method: body ? 'POST' : 'GET',
      headers,
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, json: (await response.json()) as T };
  };
  /** A run's server-sent events, until the stream ends (the run paused or ended). */
  const events = async (id: string) => {
    const response = await fetch(`${origin}/agents/runs/${id}/events`, { headers });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    return (await response.text())
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice('data: '.length)) as { type: string; run?: RunView });
  };
  return { origin, token, api, events };
}

describe('agents mounted in a Fastify app', () => {
  it('runs the agent over HTTP: a deploy waits for approval, then the run answers', async () => {
    const { api, events } = await start();
    const started = await api<{ id: string }>('/runs', { task: 'Deploy the api, please.' });
    expect(started.status).toBe(202);
    const { id } = started.json;

    const paused = (await events(id)).at(-1);
    expect(paused).toMatchObject({
      type: 'paused',
      run: { status: 'awaiting_approval', pending: [{ kind: 'approval', tool: 'deploy' }] },
    });
    const effectId = paused?.run?.pending[0]?.effectId ?? '';
    expect((await api(`/runs/${id}/approve`, { effectId })).status).toBe(202);

    const streamed = await events(id);
    expect(streamed.at(-1)).toMatchObject({ type: 'ended', run: { status: 'finished' } });
    expect((await api(`/runs/${id}`)).json).toMatchObject({ status: 'finished', answer: 'The api is deployed.' });
    const { json: trace } = await api(`/runs/${id}/trace`);
    expect(trace).toMatchObject({ toolCalls: [{ tool: 'deploy', result: 'deployed api' }] });
    expect((await api<{ runs: { id: string }[] }>('/runs')).json.runs.map((run) => run.id)).toEqual([id]);
  });

  it('serves the studio under /agents, its files and API found from there', async () => {
    const { origin } = await start();
    const page = await fetch(`${origin}/agents/studio/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const html = await page.text();
    expect(html).toContain('OpenManus studio');
    // The page names its files relative to itself: they are there under the mount.
    for (const file of ['studio.js', 'studio.css']) {
      expect(html).toContain(file);
      expect((await fetch(`${origin}/agents/studio/${file}`)).status).toBe(200);
    }
  });

  it('refuses a request without the token, and one from another site', async () => {
    const { origin, token } = await start();
    const runs = `${origin}/agents/runs`;
    const anonymous = await fetch(runs);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer');
    const foreign = await fetch(runs, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', origin: 'https://evil.example' },
      body: JSON.stringify({ task: 'Deploy the api.' }),
    });
    expect(foreign.status).toBe(403);
    expect((await fetch(runs, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
  });

  it("leaves the app's own routes as they were: the plugin keeps to its prefix", async () => {
    const { origin } = await start();
    expect(await (await fetch(`${origin}/health`)).json()).toEqual({ ok: true });
    // Inside the plugin bodies stay unparsed (the server reads them); outside, Fastify parses JSON.
    const echoed = await fetch(`${origin}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ hello: 'world' }),
    });
    expect(await echoed.json()).toEqual({ echoed: { hello: 'world' } });
    // Nor does the token reach beyond the prefix: the app's 404s are Fastify's own.
    const missing = await fetch(`${origin}/nowhere`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ message: 'Route GET:/nowhere not found' });
  });
});

describe('the studio under /agents in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: process.env.CHROME_PATH ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('lists the paused run and approves its deploy from the page', async () => {
    const { origin, token, api, events } = await start();
    const { json } = await api<{ id: string }>('/runs', { task: 'Deploy the api, please.' });
    await events(json.id); // until it pauses
    const context = await browser.newContext();
    cleanups.push(() => context.close());
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${origin}/agents/studio/#token=${token}`);
    const row = page.locator('#runs li').first();
    await expect.poll(() => row.textContent()).toContain('awaiting_approval');
    await row.click();
    await page.locator('#timeline button.approve').click();
    await page.locator('#answer-box:not([hidden])').waitFor();
    expect(await page.locator('#answer').textContent()).toBe('The api is deployed.');
    expect((await api(`/runs/${json.id}`)).json).toMatchObject({ status: 'finished' });
    expect(errors).toEqual([]);
  });
});
