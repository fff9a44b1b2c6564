import { existsSync } from 'node:fs';
import { mkdtemp, readFile, realpath } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AgentState, createManus, createOpenAiLlm } from '@openmanus/core';
import { type RecordedRequest, type ScriptEntry, startOpenAiServer } from '@openmanus/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentService } from '../src/service.js';
import { FileStore } from '../src/store.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(script: ScriptEntry<RecordedRequest>[], options: { store?: FileStore; dir?: string } = {}) {
  const model = await startOpenAiServer({ script });
  const dir = options.dir ?? (await realpath(await mkdtemp(join(tmpdir(), 'openmanus-service-'))));
  const store = options.store ?? new FileStore(join(dir, 'runs'));
  const workspace = join(dir, 'workspace');
  const service = createAgentService({
    agent: createManus({ workspace, approvals: ['python_execute'] }),
    llm: createOpenAiLlm({ model: 'm', apiKey: 'k', baseURL: model.baseURL, maxRetries: 0 }),
    store,
  });
  await new Promise<void>((resolve) => service.server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(service.server.address() as AddressInfo).port}`;
  cleanups.push(async () => {
    await service.idle();
    service.server.closeAllConnections();
    await new Promise((resolve) => service.server.close(resolve));
    await model.close();
  });
  const call = async (method: string, path: string, body?: object) => {
    const res = await fetch(`${base}${path}`, { method, ...(body ? { body: JSON.stringify(body) } : {}) });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };
  /** Reads the server-sent events of a run until the server ends the stream. */
  const events = async (id: string) => {
    const text = await (await fetch(`${base}/runs/${id}/events`)).text();
    return text
      .split('\n\n')
      .filter((block) => block.startsWith('data: '))
      .map(
        (block) =>
          JSON.parse(block.slice(6)) as { type: string; run?: Record<string, unknown>; event?: { type: string } },
      );
  };
  return { model, service, store, workspace, dir, call, events };
}

const finish = (text: string) => ({
  content: text,
  toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }],
});

describe('an agent behind an HTTP API', () => {
  it('starts a run, streams its events and reports the answer', async () => {
    const { call, events } = await setup([{ content: 'Nothing to compute: 2 + 2 = 4.', delayMs: 100 }]);
    const { status, json } = await call('POST', '/runs', { task: 'What is 2 + 2?' });
    expect(status).toBe(202);
    const items = await events(String(json.id));
    expect(items.map((i) => i.type)).toContain('event');
    expect(items.at(-1)).toMatchObject({
      type: 'ended',
      run: { status: 'finished', answer: 'Nothing to compute: 2 + 2 = 4.' },
    });
    expect((await call('GET', `/runs/${json.id}`)).json).toMatchObject({ finishReason: 'answered' });
  });

  it('pauses for approval, then runs the approved code when a client says yes', async () => {
    const { call, events, workspace } = await setup([
      {
        toolCalls: [{ id: 'py1', name: 'python_execute', arguments: { code: 'open("fib.txt","w").write(str(6765))' } }],
      },
      finish('Wrote fib.txt.'),
    ]);
    const id = String((await call('POST', '/runs', { task: 'fib(20) to a file' })).json.id);
    const paused = (await events(id)).at(-1);
    expect(paused).toMatchObject({
      type: 'paused',
      run: { status: 'awaiting_approval', pending: [{ callId: 'py1', tool: 'python_execute' }] },
    });
    expect(existsSync(join(workspace, 'fib.txt'))).toBe(false);
    expect((await call('POST', `/runs/${id}/approvals/nope`, { approved: true })).status).toBe(409);
    expect((await call('POST', `/runs/${id}/approvals/py1`, { approved: true })).status).toBe(202);
    expect((await events(id)).at(-1)).toMatchObject({
      type: 'ended',
      run: { finishReason: 'terminated', answer: 'Wrote fib.txt.' },
    });
    expect(await readFile(join(workspace, 'fib.txt'), 'utf8')).toBe('6765');
  });

  it('a denial reaches the model as an observation', async () => {
    const { call, events, model } = await setup([
      { toolCalls: [{ id: 'py1', name: 'python_execute', arguments: { code: 'import shutil; shutil.rmtree("/")' } }] },
      finish('Understood, I will not do that.'),
    ]);
    const id = String((await call('POST', '/runs', { task: 'clean up' })).json.id);
    await events(id);
    await call('POST', `/runs/${id}/approvals/py1`, { approved: false, reason: 'never' });
    expect((await events(id)).at(-1)).toMatchObject({ run: { answer: 'Understood, I will not do that.' } });
    expect(model.requests[1]?.messages.at(-2)?.content).toBe('Error: the user did not approve this call: never');
  });

  it('runs many tasks at once and cancels one on request', async () => {
    const script: ScriptEntry<RecordedRequest> = (request) => {
      const task = String(request.messages.find((m) => m.role === 'user')?.content);
      return task === 'slow' ? { content: 'late', delayMs: 10_000 } : { content: `answer to ${task}` };
    };
    const { call, events } = await setup([script, script, script, script, script, script]);
    const slow = String((await call('POST', '/runs', { task: 'slow' })).json.id);
    const ids = await Promise.all(
      [1, 2, 3, 4, 5].map(async (n) => String((await call('POST', '/runs', { task: `task ${n}` })).json.id)),
    );
    const ends = await Promise.all(ids.map(async (id) => (await events(id)).at(-1)?.run?.answer));
    expect(ends).toEqual([1, 2, 3, 4, 5].map((n) => `answer to task ${n}`));
    const cancelled = await call('DELETE', `/runs/${slow}`);
    expect(cancelled.json).toMatchObject({
      status: 'finished',
      finishReason: 'cancelled',
      error: 'cancelled by the client',
    });
  });

  it('resumes an unfinished run after a restart, without repeating a step', async () => {
    // The first process dies right after it saved the state of step 2.
    class DyingStore extends FileStore {
      override async save(id: string, state: AgentState) {
        await super.save(id, state);
        if (state.step === 2 && state.status === 'awaiting_llm') throw new Error('process killed');
      }
    }
    const steps = [1, 2, 3].map((n) => ({
      toolCalls: [{ name: 'str_replace_editor', arguments: { command: 'view', path: `/tmp/${n}` } }],
    }));
    const dir = await realpath(await mkdtemp(join(tmpdir(), 'openmanus-service-')));
    const dying = await setup([...steps, finish('done')], { dir, store: new DyingStore(join(dir, 'runs')) });
    const id = String((await dying.call('POST', '/runs', { task: 'look around' })).json.id);
    await dying.events(id);
    await dying.service.idle();
    expect((await dying.call('GET', `/runs/${id}`)).json).toMatchObject({ status: 'awaiting_llm', step: 2 });
    expect(dying.model.hits).toBe(1);

    // A new process on the same store: the rest of the script, served by a fresh model.
    const next = await setup([...steps.slice(1), finish('done')], { dir });
    expect(await next.service.recover()).toEqual([id]);
    await next.service.idle();
    expect((await next.call('GET', `/runs/${id}`)).json).toMatchObject({
      status: 'finished',
      finishReason: 'terminated',
      step: 4,
    });
    expect(next.model.hits).toBe(3);
    expect(next.model.requests.map((r) => r.messages.filter((m) => m.role === 'tool').length)).toEqual([1, 2, 3]);
  });

  it('answers bad requests clearly', async () => {
    const { call } = await setup([]);
    expect(await call('POST', '/runs', { nope: 1 })).toEqual({
      status: 400,
      json: { error: 'body must be {"task": "..."}' },
    });
    expect((await call('GET', '/runs/unknown')).status).toBe(404);
    expect((await call('GET', '/elsewhere')).status).toBe(404);
  });
});
