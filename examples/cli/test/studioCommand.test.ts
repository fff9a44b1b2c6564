// `openmanus studio`, run as a process over a data directory another server wrote.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createAgent, defineTool, run } from '@openmanus/core';
import { scriptedLlm } from '@openmanus/core/testing';
import { createServer } from '@openmanus/server';
import { createSqliteStore } from '@openmanus/sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { dist, scriptedModels, tempDir } from './helpers.js';

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});
const endpoint = scriptedModels();

/** What the tests read of a run's view and of its events. */
interface RunView {
  readonly status: string;
  readonly answer?: string;
  readonly error?: { readonly message: string };
}

/** The built CLI as `openmanus studio --port 0 …` in `cwd` (no config.toml there), once it has printed its URL. */
function startStudio(cwd: string, args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [dist('cli.js'), 'studio', '--port', '0', ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stderr = '';
  const ready = new Promise<{ url: URL; token: string }>((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      if (!stderr.includes('Ctrl+C stops it.\n')) return;
      const url = /url: +(\S+)/.exec(stderr)?.[1];
      if (!url) return reject(new Error(`no url in: ${stderr}`));
      resolve({ url: new URL(url), token: new URLSearchParams(new URL(url).hash.slice(1)).get('token') ?? '' });
    });
    child.stderr.once('end', () => reject(new Error(`the studio ended before it was ready: ${stderr}`)));
  });
  return { child, exited, ready, stderr: () => stderr };
}

/** The studio's API next to its page, with the token. */
const apiOf = (url: URL, token: string) => {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const api = async <T>(path: string, body?: object) => {
    const response = await fetch(new URL(path, url.origin), {
      method: body ? 'POST' : 'GET',
      headers,
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, json: (await response.json()) as T };
  };
  /** Waits for the run to pause or end (its event stream ends then), and gives the last event. */
  const settled = async (id: string) => {
    const text = await (await fetch(new URL(`/runs/${id}/events`, url.origin), { headers })).text();
    const last = text.split('\n').findLast((line) => line.startsWith('data: '));
    return JSON.parse(last?.slice('data: '.length) ?? '{}') as { type: string; run: RunView };
  };
  return { api, settled };
};

const deploy = defineTool<{ service: string }>({
  name: 'deploy',
  description: 'Deploys a service',
  parameters: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
  execute: ({ service }) => `deployed ${service}`,
});

/** A data directory with one run in it, paused on a deploy, written by an app's own server. */
async function dataDirWithARun() {
  const dataDir = await tempDir();
  dirs.push(dataDir);
  const server = await createServer({
    agents: { manus: createAgent({ name: 'manus', tools: [deploy] }) },
    llm: scriptedLlm([{ toolCalls: [{ name: 'deploy', arguments: { service: 'api' } }] }]),
    approvals: ['deploy'],
    dataDir,
    log: () => undefined,
  });
  const id = server.runs.start('Deploy the api', undefined);
  await server.idle();
  await server.close();
  return { dataDir, id, token: (await readFile(join(dataDir, 'token'), 'utf8')).trim() };
}

describe('openmanus studio', () => {
  it('serves the studio over the runs a server kept in the data directory, until SIGTERM', async () => {
    const { dataDir, id, token } = await dataDirWithARun();
    const cwd = await tempDir();
    dirs.push(cwd);
    const studio = startStudio(cwd, ['--data-dir', dataDir]);
    const { url, token: printed } = await studio.ready;
    expect(url.hostname).toBe('127.0.0.1');
    expect(url.pathname).toBe('/studio/');
    expect(printed).toBe(token); // the data directory's own
    expect(studio.stderr()).toContain('model:    none configured');

    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('OpenManus studio');
    const { api, settled } = apiOf(url, token);
    expect((await fetch(new URL('/runs', url.origin))).status).toBe(401);
    const { json: listed } = await api<{ runs: { id: string; status: string; task: string }[] }>('/runs');
    expect(listed.runs).toMatchObject([{ id, status: 'awaiting_approval', task: 'Deploy the api' }]);
    // The journal is read too: the run's model call, as the app's server recorded it.
    const { json: trace } = await api(`/runs/${id}/trace`);
    expect(trace).toMatchObject({ modelCalls: [{ sent: { tools: expect.arrayContaining(['deploy']) } }] });
    const { json: agents } = await api('/agents');
    expect(agents).toMatchObject({
      agents: ['manus', 'swe', 'data_analysis', 'browser'].map((name) => ({ name, model: 'none' })),
    });

    // Without a model a new run says why it cannot go on.
    const started = await api<{ id: string }>('/runs', { task: 'Say hello', agent: 'swe' });
    expect(started.status).toBe(202);
    const ended = await settled(started.json.id);
    expect(ended).toMatchObject({ type: 'ended', run: { status: 'failed' } });
    expect(ended.run.error?.message).toContain('no LLM is configured');

    studio.child.kill('SIGTERM');
    expect(await studio.exited).toBe(0);
    expect(studio.stderr()).toContain('openmanus studio: stopping');
  });

  it("runs the CLI's agents with the model the environment configures", async () => {
    const { env } = await endpoint([
      { content: 'Hello!', toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
    ]);
    const cwd = await tempDir();
    dirs.push(cwd);
    const studio = startStudio(cwd, ['--sandbox', 'none', '--workspace', join(cwd, 'workspace')], {
      ...env,
      OPENMANUS_MODEL: 'scripted-model',
    });
    const { url, token } = await studio.ready;
    expect(studio.stderr()).toContain(`data:     ${join(cwd, '.openmanus')}`);
    expect(studio.stderr()).toContain('model:    scripted-model');
    const { api, settled } = apiOf(url, token);
    const started = await api<{ id: string }>('/runs', { task: 'Say hello, then stop', agent: 'swe' });
    expect(await settled(started.json.id)).toMatchObject({ type: 'ended', run: { status: 'finished' } });
    const { json: listed } = await api<{ runs: unknown[] }>('/runs');
    expect(listed.runs).toMatchObject([{ id: started.json.id, agent: 'swe', model: 'scripted-model' }]);

    studio.child.kill('SIGINT');
    expect(await studio.exited).toBe(0);
  });

  it('opens a SQLite store a plain run wrote (--store), with the data dir beside it', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const file = join(dir, 'runs.db');
    const store = createSqliteStore(file);
    const outcome = await run(createAgent({ name: 'notes' }), 'Write a note', {
      llm: scriptedLlm([{ content: 'A note.' }]),
      store,
      runId: 'note-1',
    });
    store.close();
    expect(outcome.status).toBe('finished');

    const cwd = await tempDir();
    dirs.push(cwd);
    const studio = startStudio(cwd, ['--store', file]);
    const { url, token } = await studio.ready;
    expect(studio.stderr()).toContain(`store:    ${file}`);
    expect(studio.stderr()).toContain(`data:     ${dir}`);
    const { api } = apiOf(url, token);
    const { json: listed } = await api<{ runs: { id: string; status: string; task: string }[] }>('/runs');
    expect(listed.runs).toMatchObject([{ id: 'note-1', status: 'finished', task: 'Write a note' }]);
    const { status, json: view } = await api<RunView>('/runs/note-1');
    expect(status).toBe(200);
    expect(view).toMatchObject({ status: 'finished', answer: 'A note.' });

    studio.child.kill('SIGTERM');
    expect(await studio.exited).toBe(0);
  });

  it('says what is wrong with its options', async () => {
    const cwd = await tempDir();
    dirs.push(cwd);
    const studio = startStudio(cwd, ['--port', '70000']);
    await expect(studio.ready).rejects.toThrow('--port must be a port number (0 to 65535), got "70000"');
    expect(await studio.exited).toBe(2);
  });
});
