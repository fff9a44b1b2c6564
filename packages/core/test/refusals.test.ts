// What `run`, `resume` and `resumeWith` refuse, before anything is sent or saved: one check of the
// state they start from, and answers only to what a run waits for. Against a real HTTP server.
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../src/kernel/agent.js';
import type { AgentState } from '../src/kernel/state.js';
import type { LlmPort } from '../src/llm/llm.js';
import { createOpenAiLlm } from '../src/llm/openai.js';
import { createMemoryStore } from '../src/shell/memoryStore.js';
import { InvalidStateError } from '../src/shell/restore.js';
import { resume, resumeWith, run } from '../src/shell/run.js';
import { type OpenAiServer, startOpenAiServer } from '../src/testing/server.js';
import { defineTool } from '../src/tools/defineTool.js';

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys',
  parameters: z.object({ env: z.string() }),
  needsApproval: true,
  execute: ({ env }) => `deployed to ${env}`,
});
const agent = createAgent({ name: 'ops', tools: [deploy] });

let server: OpenAiServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A model on a real server: a deploy call, then answers; `server.hits` counts what reached it. */
async function model(): Promise<LlmPort> {
  server = await startOpenAiServer({
    script: [
      { toolCalls: [{ name: 'deploy', arguments: { env: 'prod' } }] },
      { content: 'shipped' },
      { content: 'more' },
    ],
  });
  return createOpenAiLlm({ model: 'm', apiKey: 'k', baseURL: server.baseURL, maxRetries: 0 });
}

/** The error a promise rejects with (it must reject). */
async function refusal(promise: Promise<unknown>): Promise<InvalidStateError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof InvalidStateError)) throw new Error(`expected an InvalidStateError, got ${String(error)}`);
  return error;
}

const described = (error: InvalidStateError) => ({ code: error.code, message: error.message });

describe('one check of a saved state for run, resume and resumeWith', () => {
  it('a newer or damaged state is refused by all three with the same error naming the field, before any request', async () => {
    const llm = await model();
    // A finished run, which would take a new task.
    const paused = await run(agent, 'ship', { llm });
    const answered = { type: 'approvalGiven', effectId: paused.pending[0]?.effectId ?? '' } as const;
    const finished = (await resumeWith(agent, paused.state, answered, { llm })).state;
    expect(finished.status).toBe('finished');
    const hitsBefore = server?.hits ?? 0;
    const newer = { ...finished, schemaVersion: 99 } as unknown as AgentState;
    const damaged = { ...finished, messages: null } as unknown as AgentState;
    const answer = { type: 'approvalGiven', effectId: 'approval-1-0' } as const;

    for (const [bad, expected] of [
      [newer, { code: 'STATE_NEWER', message: expect.stringMatching(/^saved state has schemaVersion 99, newer/) }],
      [
        damaged,
        { code: 'STATE_DAMAGED', message: 'saved state is damaged at messages: expected array, received null' },
      ],
    ] as const) {
      const refusals = [
        await refusal(run(agent, 'next task', { llm, state: bad })),
        await refusal(resume(agent, bad, { llm })),
        await refusal(resumeWith(agent, bad, answer, { llm })),
      ].map(described);
      expect(refusals).toEqual([expected, expected, expected]);

      // The same through a store, by run id.
      const store = createMemoryStore();
      await store.save('bad', bad, 0);
      const stored = [
        await refusal(run(agent, 'next task', { llm, store, runId: 'bad' })),
        await refusal(resume(agent, 'bad', { llm, store })),
        await refusal(resumeWith(agent, 'bad', answer, { llm, store })),
      ].map(described);
      expect(stored).toEqual(refusals);
      expect((await store.load('bad'))?.version).toBe(1);
    }
    expect(server?.hits).toBe(hitsBefore);
  });
});

describe('resumeWith answers only what a run waits for', () => {
  it('an unknown run, or a run id without a store, is an InvalidStateError (not_found)', async () => {
    const llm = await model();
    const store = createMemoryStore();
    const answer = { type: 'approvalGiven', effectId: 'approval-1-0' } as const;
    expect(described(await refusal(resumeWith(agent, 'missing', answer, { llm, store })))).toEqual({
      code: 'RUN_NOT_FOUND',
      message: 'run "missing" is not in the store',
    });
    expect((await refusal(resume(agent, 'missing', { llm }))).code).toBe('RUN_NOT_FOUND');
    expect(await store.list()).toEqual([]);
    expect(server?.hits).toBe(0);
  });

  it('an approval of a finished run is refused and changes nothing in the store', async () => {
    const llm = await model();
    const store = createMemoryStore();
    const paused = await run(agent, 'ship', { llm, store, runId: 'r1' });
    const effectId = paused.pending[0]?.effectId ?? '';
    const done = await resumeWith(agent, 'r1', { type: 'approvalGiven', effectId }, { llm, store });
    expect(done).toMatchObject({ status: 'finished', answer: 'shipped' });
    const before = await store.load('r1');
    const hits = server?.hits;

    // The same approval again (a second approver, a redelivery), and a rejection after the fact.
    for (const late of [
      { type: 'approvalGiven', effectId },
      { type: 'approvalDenied', effectId, reason: 'too late' },
    ] as const) {
      const error = await refusal(resumeWith(agent, 'r1', late, { llm, store }));
      expect(error.code).toBe('RUN_NOT_WAITING');
      expect(error.message).toMatch(/^run "r1" has finished \(answered\); it waits for no approval/);
    }
    // A finished state passed in is refused the same way.
    expect((await refusal(resumeWith(agent, done.state, { type: 'approvalGiven', effectId }, { llm }))).code).toBe(
      'RUN_NOT_WAITING',
    );
    expect(await store.load('r1')).toEqual(before);
    expect(server?.hits).toBe(hits);
  });

  it('an answer to an input a paused run does not wait for is refused, naming what it waits for', async () => {
    const llm = await model();
    const store = createMemoryStore();
    const paused = await run(agent, 'ship', { llm, store, runId: 'r1' });
    const before = await store.load('r1');
    const error = await refusal(
      resumeWith(agent, 'r1', { type: 'humanReplied', effectId: 'approval-1-0', answer: 'yes' }, { llm, store }),
    );
    expect(described(error)).toEqual({
      code: 'RUN_NOT_WAITING',
      message: 'run "r1" waits for no human "approval-1-0" (it waits for: approval approval-1-0); nothing was changed',
    });
    expect(
      (await refusal(resumeWith(agent, paused.state, { type: 'approvalGiven', effectId: 'x' }, { llm }))).code,
    ).toBe('RUN_NOT_WAITING');
    expect(await store.load('r1')).toEqual(before);
    expect(server?.hits).toBe(1);
  });

  it('a new task on a paused run is refused (unfinished), and the paused run is kept', async () => {
    const llm = await model();
    const store = createMemoryStore();
    const paused = await run(agent, 'ship', { llm, store, runId: 'r1' });
    expect((await refusal(run(agent, 'something else', { llm, state: paused.state }))).code).toBe('RUN_UNFINISHED');
    expect((await refusal(run(agent, 'something else', { llm, store, runId: 'r1' }))).code).toBe('RUN_UNFINISHED');
    expect((await store.load('r1'))?.state).toEqual(paused.state);
  });
});
