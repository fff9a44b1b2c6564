// A worker killed with SIGKILL mid-run, resumed from the database in this process: every call
// whose result was saved ran exactly once.
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOpenAiLlm, resume } from '@openmanus/core';
import { type OpenAiServer, type RecordedRequest, startOpenAiServer } from '@openmanus/core/testing';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteStore, type SqliteStore } from '../src/sqliteStore.js';
import { counterAgent } from './children/counterAgent.js';
import { buildChildren, type Children, startChild } from './children.js';

/** The model bumps a, b and c, one call a turn, then answers: by the results it has seen, so a request sent again gets the same reply. */
const bumpThree = (request: RecordedRequest) => {
  const next = ['a', 'b', 'c'][request.messages.filter((m) => m.role === 'tool').length];
  return next
    ? { toolCalls: [{ id: `bump_${next}`, name: 'bump', arguments: { name: next } }] }
    : { content: 'bumped a, b and c' };
};
const toolResultsSeen = (model: OpenAiServer) =>
  model.requests.map((r) => r.messages.filter((m) => m.role === 'tool').length);

let children: Children;
beforeAll(async () => {
  children = await buildChildren();
});
afterAll(() => children.remove());

let dir: string;
let model: OpenAiServer;
let opened: SqliteStore | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'openmanus-sqlite-crash-'));
  model = await startOpenAiServer({ script: bumpThree });
});
afterEach(async () => {
  opened?.close();
  await model.close();
  await rm(dir, { recursive: true, force: true });
});

/**
 * Starts the worker on a new run, waits for the line it prints where it stops, kills it with
 * SIGKILL, and opens the database in this process.
 */
async function killWorker(stopWhen: 'running' | 'saved', name: string, atMostOnce = false) {
  const file = join(dir, 'runs.db');
  const log = join(dir, 'bumps.log');
  const args = [file, model.baseURL, log, 'job-1', stopWhen, name, atMostOnce ? 'at-most-once' : ''];
  const worker = startChild(children.script('agentWorker'), args);
  try {
    await worker.line((line) => line === `${stopWhen} ${name}`);
  } finally {
    worker.process.kill('SIGKILL');
  }
  expect(await worker.exited).toBe('SIGKILL');
  const store = createSqliteStore(file);
  opened = store;
  const bumps = async () => (existsSync(log) ? (await readFile(log, 'utf8')).split('\n').filter(Boolean) : []);
  return { store, log, bumps };
}

/** Resumes the run in this process from the database, as another worker would. */
async function resumeHere(store: SqliteStore, log: string, atMostOnce = false) {
  const llm = createOpenAiLlm({ model: 'scripted-model', apiKey: 'unused', baseURL: model.baseURL, maxRetries: 0 });
  const outcome = await resume(counterAgent(log, { atMostOnce }), 'job-1', { llm, store });
  expect(outcome).toMatchObject({ status: 'finished', answer: 'bumped a, b and c', runId: 'job-1' });
  expect(await store.load('job-1')).toMatchObject({ state: outcome.state });
  return outcome;
}

describe('a worker killed with SIGKILL mid-run', () => {
  it('while a call runs: resumed, the calls whose results were saved do not run again; the one cut short does', async () => {
    const { store, log, bumps } = await killWorker('running', 'b');
    expect(await bumps()).toEqual(['a', 'b']);
    const saved = await store.load('job-1');
    expect(saved?.state).toMatchObject({ status: 'awaiting_tools' });
    expect(saved?.state.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['bumped a']);

    await resumeHere(store, log);
    // b's first run was cut short before its result was saved: it is the one call run again.
    expect(await bumps()).toEqual(['a', 'b', 'b', 'c']);
    // No model reply that was saved is asked for again.
    expect(toolResultsSeen(model)).toEqual([0, 1, 2, 3]);
  });

  it('right after a result was saved: resumed, no call runs twice', async () => {
    const { store, log, bumps } = await killWorker('saved', 'b');
    expect(await bumps()).toEqual(['a', 'b']);
    expect(model.requests).toHaveLength(2);

    const outcome = await resumeHere(store, log);
    expect(await bumps()).toEqual(['a', 'b', 'c']);
    expect(toolResultsSeen(model)).toEqual([0, 1, 2, 3]);
    expect(outcome.state.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([
      'bumped a',
      'bumped b',
      'bumped c',
    ]);
  });

  it('while an at-most-once call runs: resumed, that call is not run again and the model is told', async () => {
    const { store, log, bumps } = await killWorker('running', 'b', true);
    await resumeHere(store, log, true);
    expect(await bumps()).toEqual(['a', 'b', 'c']);
    const told = model.requests[2]?.messages.filter((m) => m.role === 'tool').at(-1)?.content;
    expect(told).toMatch(/^Error: bump was interrupted while it ran .* may or may not have taken effect/);
  });
});
