import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CheckpointStore } from '@openmanus/core';
import type { RecordedRequest, ScriptEntry } from '@openmanus/core/testing';
import { createSqliteStore } from '@openmanus/sqlite';
import { describe, expect, it } from 'vitest';
import { finish, onCleanup, setup, TOKEN, tempDir, until } from './helpers.js';

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

  it("gives the run's usage with the tokens served from the cache and the cost, live and at the end", async () => {
    const { call, events } = await setup(
      [{ content: 'Four.', usage: { inputTokens: 2_000, outputTokens: 10, cachedInputTokens: 1_500 } }],
      { model: 'gpt-4o-mini' },
    );
    const id = String((await call('POST', '/runs', { task: 'What is 2 + 2?' })).json.id);
    const items = await events(id);
    // 500 × $0.15 + 1,500 × $0.075 + 10 × $0.60 per million.
    const usage = { inputTokens: 2_000, outputTokens: 10, llmCalls: 1, cachedInputTokens: 1_500, costUsd: 0.0001935 };
    expect(items.at(-1)).toMatchObject({ type: 'ended', run: { usage } });
    expect(items.filter((i) => i.type === 'event').at(-1)).toMatchObject({ usage });
    expect((await call('GET', `/runs/${id}`)).json).toMatchObject({ usage });
  });

  it('says a cost is unknown, as null, when the model has no price', async () => {
    const { call, events } = await setup([{ content: 'Four.', usage: { inputTokens: 20, outputTokens: 1 } }]);
    const id = String((await call('POST', '/runs', { task: 'What is 2 + 2?' })).json.id);
    const items = await events(id);
    const usage = { inputTokens: 20, outputTokens: 1, llmCalls: 1, costUsd: null };
    expect(items.at(-1)).toMatchObject({ type: 'ended', run: { usage } });
    // Before the first call, nothing was spent.
    expect(items.find((i) => i.type === 'event')).toMatchObject({ usage: { llmCalls: 0, costUsd: 0 } });
  });

  it('a client that asks for the events once a fast run has ended still gets its leg, then the end', async () => {
    const { call, events } = await setup([{ content: 'Done at once.' }]);
    const id = String((await call('POST', '/runs', { task: 'Be quick.' })).json.id);
    await until(async () => (await call('GET', `/runs/${id}`)).json.status === 'finished');
    const items = await events(id);
    expect(items.filter((i) => i.type === 'event').length).toBeGreaterThan(1);
    expect(items.at(-1)).toMatchObject({ type: 'ended', run: { answer: 'Done at once.' } });
  });

  it('pauses for approval, then runs the approved code when a client says yes', async () => {
    const { call, events, decide, workspace } = await setup([
      {
        toolCalls: [{ id: 'py1', name: 'python_execute', arguments: { code: 'open("fib.txt","w").write(str(6765))' } }],
      },
      finish('Wrote fib.txt.'),
    ]);
    const id = String((await call('POST', '/runs', { task: 'fib(20) to a file' })).json.id);
    const paused = (await events(id)).at(-1);
    expect(paused).toMatchObject({
      type: 'paused',
      run: { status: 'awaiting_approval', pending: [{ kind: 'approval', callId: 'py1', tool: 'python_execute' }] },
    });
    expect(existsSync(join(workspace, 'fib.txt'))).toBe(false);
    expect((await call('POST', `/runs/${id}/approve`, { effectId: 'nope' })).status).toBe(409);
    expect((await decide(id, 'py1')).status).toBe(202);
    expect((await events(id)).at(-1)).toMatchObject({
      type: 'ended',
      run: { finishReason: 'terminated', answer: 'Wrote fib.txt.' },
    });
    expect(await readFile(join(workspace, 'fib.txt'), 'utf8')).toBe('6765');
  });

  it('a denial reaches the model as an observation', async () => {
    const { call, events, decide, model } = await setup([
      { toolCalls: [{ id: 'py1', name: 'python_execute', arguments: { code: 'import shutil; shutil.rmtree("/")' } }] },
      finish('Understood, I will not do that.'),
    ]);
    const id = String((await call('POST', '/runs', { task: 'clean up' })).json.id);
    await events(id);
    expect((await decide(id, 'py1', false, 'never')).status).toBe(202);
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
    const cancelled = await call('POST', `/runs/${slow}/cancel`, {});
    expect(cancelled.json).toMatchObject({
      status: 'finished',
      finishReason: 'cancelled',
      error: { code: 'CANCELLED', message: 'cancelled by the client' },
    });
  });

  it('resumes an unfinished run after a restart, without repeating a step', async () => {
    // The first process dies right after it saved the state of step 2.
    const dir = await tempDir();
    const files = createSqliteStore(join(dir, 'service', 'runs.db'));
    onCleanup(async () => files.close());
    const dying: CheckpointStore = {
      ...files,
      async save(id, state, expectedVersion) {
        const version = await files.save(id, state, expectedVersion);
        if (state.step === 2 && state.status === 'awaiting_llm') throw new Error('process killed');
        return version;
      },
    };
    const steps = [1, 2, 3].map((n) => ({
      toolCalls: [{ name: 'str_replace_editor', arguments: { command: 'view', path: `/tmp/${n}` } }],
    }));
    const first = await setup([...steps, finish('done')], { dir, store: dying });
    const id = String((await first.call('POST', '/runs', { task: 'look around' })).json.id);
    await first.events(id);
    await first.service.idle();
    expect((await first.call('GET', `/runs/${id}`)).json).toMatchObject({ status: 'awaiting_llm', step: 2 });
    expect(first.model.hits).toBe(1);

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

  it('multi-turn: a message answers ask_human, and starts the next task once the run has ended', async () => {
    const { call, events, model } = await setup([
      { toolCalls: [{ id: 'q1', name: 'ask_human', arguments: { inquire: 'Which city?' } }] },
      finish('Kyoto it is.'),
      finish('Osaka is next door.'),
    ]);
    const id = String((await call('POST', '/runs', { task: 'plan a trip' })).json.id);
    expect((await events(id)).at(-1)).toMatchObject({
      type: 'paused',
      run: { status: 'awaiting_human', pending: [{ kind: 'human', question: 'Which city?' }] },
    });
    expect((await call('POST', `/runs/${id}/messages`, { text: 'Kyoto' })).status).toBe(202);
    expect((await events(id)).at(-1)).toMatchObject({ type: 'ended', run: { answer: 'Kyoto it is.' } });
    expect(model.requests[1]?.messages.find((m) => m.role === 'tool')?.content).toContain('Kyoto');
    expect((await call('POST', `/runs/${id}/messages`, { text: 'and Osaka?' })).status).toBe(202);
    const last = (await events(id)).at(-1);
    expect(last).toMatchObject({ type: 'ended', run: { answer: 'Osaka is next door.' } });
    const timeline = (last?.run?.timeline ?? []) as { kind: string; text?: string }[];
    const said = timeline.filter((e) => e.kind === 'user');
    expect(said.map((e) => e.text)).toEqual(['plan a trip', 'and Osaka?']);
    expect((await call('POST', `/runs/${id}/messages`, { text: '' })).status).toBe(400);
  });

  it('a stream resumed with Last-Event-ID gets the rest of the leg; a new one starts with a snapshot', async () => {
    const { base, call } = await setup([
      {
        content: 'Looking.',
        toolCalls: [{ name: 'str_replace_editor', arguments: { command: 'view', path: '/tmp' } }],
      },
      { ...finish('Seen.'), delayMs: 1500 },
    ]);
    const id = String((await call('POST', '/runs', { task: 'look' })).json.id);
    const auth = { authorization: `Bearer ${TOKEN}` };
    /** Reads the stream's events, stopping after `enough` says so (or at its end). */
    const read = async (headers: Record<string, string>, enough: (data: { type: string }) => boolean) => {
      const controller = new AbortController();
      const res = await fetch(`${base}/runs/${id}/events`, {
        headers: { ...auth, ...headers },
        signal: controller.signal,
      });
      const got: { id?: string; data: { type: string; event?: { type: string } } }[] = [];
      let buffer = '';
      const decoder = new TextDecoder();
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        const blocks = buffer.split('\n\n');
        buffer = blocks.pop() ?? '';
        for (const block of blocks) {
          const field = (name: string) =>
            block
              .split('\n')
              .find((l) => l.startsWith(`${name}: `))
              ?.slice(name.length + 2);
          got.push({ id: field('id'), data: JSON.parse(field('data') ?? '{}') });
        }
        // Leaving the loop cancels the body: the client hangs up.
        if (got.some((m) => enough(m.data))) break;
      }
      return got;
    };
    const toolDone = (data: { type: string; event?: { type: string } }) => data.event?.type === 'toolCompleted';
    const first = await read({}, toolDone);
    const lastId = first.at(-1)?.id ?? '';
    expect(lastId).toMatch(/^\w+\.\d+$/);
    // A fresh subscriber in the middle of the leg: where the run is now, then what follows.
    const fresh = await read({}, () => true);
    expect(fresh[0]?.data).toMatchObject({ type: 'snapshot', run: { status: 'awaiting_llm' } });
    // Resumed: exactly the events after the last one seen, to the end of the leg.
    const rest = await read({ 'last-event-id': lastId }, () => false);
    const [leg, index] = lastId.split('.');
    expect(rest[0]?.id).toBe(`${leg}.${Number(index) + 1}`);
    expect(rest.map((m) => m.data.type)).not.toContain('snapshot');
    expect(rest.at(-1)?.data).toMatchObject({ type: 'ended', run: { answer: 'Seen.' } });
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
