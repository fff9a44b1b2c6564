// How `run`, `resume` and `resumeWith` use a store, run against every kind of store (stores in other
// packages import this file too): transitions saved, conversations continued, interrupted runs
// resumed, and a second writer refused.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../src/kernel/agent.js';
import type { LlmRequest } from '../src/kernel/effects.js';
import type { AgentState } from '../src/kernel/state.js';
import { resume, resumeWith, run, stream } from '../src/shell/run.js';
import { createRunEmitter, type RunEmitter } from '../src/shell/runItems.js';
import type { CheckpointStore } from '../src/shell/store.js';
import type { ScriptedReply } from '../src/testing/script.js';
import { scriptedLlm } from '../src/testing/scriptedLlm.js';
import { defineTool } from '../src/tools/defineTool.js';
import type { StoreKind } from './storeContract.js';

function calculator(added: string[]) {
  const add = defineTool({
    name: 'add',
    description: 'Add two numbers',
    parameters: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }) => {
      added.push(`${a}+${b}`);
      return String(a + b);
    },
  });
  return createAgent({
    name: 'calc',
    systemPrompt: 'You add numbers.',
    nextStepPrompt: NEXT,
    tools: [add],
    tokenizer: 'estimate',
  });
}

/** Sent last in every request, never stored: what comes before it is the history. */
const NEXT = 'What next?';

/** How many replies the model gave in the current task, so a request sent again gets the same reply. */
const turnOf = (request: LlmRequest) => {
  const history = request.messages.slice(0, -1);
  const task = history.findLastIndex((m) => m.role === 'user');
  return history.slice(task).filter((m) => m.role === 'assistant').length;
};
const taskOf = (request: LlmRequest) =>
  request.messages
    .slice(0, -1)
    .filter((m) => m.role === 'user')
    .at(-1)?.content ?? '(no task)';

/** Adds 1+2, then 3+4, then answers with the sums. */
const twoSums = (request: LlmRequest): ScriptedReply => {
  const turn = turnOf(request);
  if (turn === 0) return { toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] };
  if (turn === 1) return { toolCalls: [{ name: 'add', arguments: { a: 3, b: 4 } }] };
  const sums = request.messages.filter((m) => m.role === 'tool').map((m) => m.content);
  return { content: `Sums: ${sums.join(', ')} (for "${taskOf(request)}")` };
};

function countEvents(): { emitter: RunEmitter; count: () => number } {
  const emitter = createRunEmitter();
  let events = 0;
  emitter.on('event', () => {
    events++;
  });
  return { emitter, count: () => events };
}

const requestsAt = (llm: { requests: readonly LlmRequest[] }, turn: number) =>
  llm.requests.filter((r) => turnOf(r) === turn).length;

/** An agent whose one tool, deploy, needs approval: a run of it pauses until someone decides. */
const opsAgent = () =>
  createAgent({
    name: 'ops',
    tools: [
      defineTool({
        name: 'deploy',
        description: 'Deploy',
        parameters: z.object({}),
        needsApproval: true,
        execute: () => 'deployed',
      }),
    ],
    nextStepPrompt: NEXT,
    tokenizer: 'estimate',
  });

export function describeStoreRunsContract(kind: StoreKind): void {
  /** The store a run uses, and another writer on the same runs (another process, for files). */
  const stores = () => {
    const writer = kind.writers();
    return { store: writer(), another: writer };
  };
  describe(`runs through a ${kind.name}`, () => {
    it('saves every transition under the run id: the stored state is the final one, its version the number of transitions', async () => {
      const { store, another } = stores();
      const llm = scriptedLlm(twoSums);
      const { emitter, count } = countEvents();
      const outcome = await run(calculator([]), 'add 1+2 and 3+4', { llm, store, runId: 'r1', emitter });

      expect(outcome).toMatchObject({ status: 'finished', runId: 'r1', answer: 'Sums: 3, 7 (for "add 1+2 and 3+4")' });
      const stored = await another().load('r1');
      expect(stored?.state).toEqual(outcome.state);
      expect(stored?.version).toBe(count());
      // started, three model replies, two tool results.
      expect(count()).toBe(6);
      expect(stored?.state.runId).toBe('r1');
      expect(await another().list()).toEqual(['r1']);
    });

    it('saves what a stream runs, too', async () => {
      const { store } = stores();
      const items = [];
      for await (const item of stream(calculator([]), 'add', { llm: scriptedLlm(twoSums), store, runId: 'r1' })) {
        items.push(item);
      }
      const events = items.filter((item) => item.type === 'event').length;
      expect(await store.load('r1')).toMatchObject({ version: events, state: { status: 'finished' } });
    });

    it('continues the stored conversation when the next task names the run and gives no state', async () => {
      const { store, another } = stores();
      const llm = scriptedLlm(twoSums);
      const agent = calculator([]);
      const first = await run(agent, 'first question', { llm, store, runId: 'r1' });
      const version = (await store.load('r1'))?.version ?? 0;

      const { emitter, count } = countEvents();
      const second = await run(agent, 'next question', { llm, store: another(), runId: 'r1', emitter });
      expect(second).toMatchObject({ status: 'finished', runId: 'r1' });
      expect(second.answer).toBe('Sums: 3, 7, 3, 7 (for "next question")');
      // The second task's first request carried the whole first conversation.
      const opening = llm.requests[3];
      expect(opening?.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
        'first question',
        'next question',
        NEXT,
      ]);
      expect(second.state.messages.slice(0, first.state.messages.length)).toEqual(first.state.messages);
      const stored = await another().load('r1');
      expect(stored?.state).toEqual(second.state);
      expect(stored?.version).toBe(version + count());
    });

    it('resumes an interrupted run by its id from the store, repeating no step', async () => {
      const { store, another } = stores();
      const added: string[] = [];
      const agent = calculator(added);
      const llm = scriptedLlm(twoSums);
      // The host's hook fails once the model has asked for the second sum: the run ends there.
      const first = await run(agent, 'add', {
        llm,
        store,
        runId: 'r1',
        checkpoint: (state) => {
          if (state.status === 'awaiting_tools' && state.step === 2) throw new Error('the host went away');
        },
      });
      expect(first).toMatchObject({ status: 'failed', finishReason: 'error' });
      expect(first.error?.message).toBe('could not save a checkpoint: the host went away');
      // The store has the last state saved before the hook threw, not the failure.
      const interrupted = await another().load('r1');
      expect(interrupted?.state).toMatchObject({ status: 'awaiting_tools', step: 2 });
      expect(added).toEqual(['1+2']);

      const { emitter, count } = countEvents();
      const resumed = await resume(agent, 'r1', { llm, store: another(), emitter });
      expect(resumed).toMatchObject({ status: 'finished', runId: 'r1', answer: 'Sums: 3, 7 (for "add")' });
      expect(added).toEqual(['1+2', '3+4']);
      expect([requestsAt(llm, 0), requestsAt(llm, 1), requestsAt(llm, 2)]).toEqual([1, 1, 1]);
      const stored = await another().load('r1');
      expect(stored?.state).toEqual(resumed.state);
      expect(stored?.version).toBe((interrupted?.version ?? 0) + count());
    });

    it('answers a paused run through the store by its id', async () => {
      const { store, another } = stores();
      const agent = opsAgent();
      const llm = scriptedLlm((request) =>
        turnOf(request) === 0 ? { toolCalls: [{ name: 'deploy' }] } : { content: 'shipped' },
      );
      const paused = await run(agent, 'ship', { llm, store, runId: 'r1' });
      expect(paused.status).toBe('awaiting_approval');
      const effectId = paused.pending[0]?.effectId ?? '';
      const done = await resumeWith(agent, 'r1', { type: 'approvalGiven', effectId }, { llm, store: another() });
      expect(done).toMatchObject({ status: 'finished', answer: 'shipped', runId: 'r1' });
      expect((await another().load('r1'))?.state).toEqual(done.state);
    });

    it('a new task on a stored run that waits for an approval is refused without losing the paused run', async () => {
      const { store, another } = stores();
      const agent = opsAgent();
      const llm = scriptedLlm((request) =>
        turnOf(request) === 0 ? { toolCalls: [{ name: 'deploy' }] } : { content: `done: ${taskOf(request)}` },
      );
      const paused = await run(agent, 'ship', { llm, store, runId: 'r1' });
      const before = await another().load('r1');

      const refused = await run(agent, 'actually, do something else', { llm, store: another(), runId: 'r1' }).then(
        (outcome) => outcome,
        (error: unknown) => error,
      );
      // Refused one way or the other (an error, or a failed outcome naming the reason)...
      expect(String(refused instanceof Error ? refused.message : (refused as { error?: string }).error)).toMatch(
        /awaiting_approval/,
      );
      // ...and the paused run is still there to be answered.
      expect(await another().load('r1')).toEqual(before);
      const effectId = paused.pending[0]?.effectId ?? '';
      const done = await resumeWith(agent, 'r1', { type: 'approvalGiven', effectId }, { llm, store: another() });
      expect(done).toMatchObject({ status: 'finished', answer: 'done: ship' });
    });

    it('of two runs started at once on one run id, one fails with the conflict and cannot overwrite the other', async () => {
      const { store, another } = stores();
      const agent = calculator([]);
      const llmA = scriptedLlm(twoSums);
      const llmB = scriptedLlm(twoSums);
      const outcomes = await Promise.all([
        run(agent, 'task A', { llm: llmA, store, runId: 'r1' }),
        run(agent, 'task B', { llm: llmB, store: another(), runId: 'r1' }),
      ]);

      const winners = outcomes.filter((o) => o.status === 'finished');
      const losers = outcomes.filter((o) => o.status === 'failed');
      expect(winners).toHaveLength(1);
      expect(losers).toHaveLength(1);
      expect(losers[0]?.error?.message).toMatch(/could not save a checkpoint: .*another writer saved it/);
      const stored = await another().load('r1');
      expect(stored?.state).toEqual(winners[0]?.state);
      // Only the winner's task is in the stored run.
      const tasks = stored?.state.messages.filter((m) => m.role === 'user').map((m) => m.content);
      expect(tasks).toHaveLength(1);
      expect(tasks?.[0]).toBe(winners[0]?.state.messages[0]?.content);
    });

    it('a save behind the driver’s back mid-run makes the run fail at its next save, and that save stays', async () => {
      const { store, another } = stores();
      let intruder: AgentState | undefined;
      let intruderVersion = 0;
      const meddle = defineTool({
        name: 'meddle',
        description: 'Saves the run from elsewhere',
        parameters: z.object({}),
        execute: async (_args, scope) => {
          const other = another();
          const current = await other.load(scope.runId);
          if (!current) throw new Error('the run is not stored');
          intruder = { ...current.state, answer: 'written by another process' };
          intruderVersion = await other.save(scope.runId, intruder, current.version);
          return 'meddled';
        },
      });
      const agent = createAgent({ name: 'a', tools: [meddle], nextStepPrompt: NEXT, tokenizer: 'estimate' });
      const llm = scriptedLlm((request) =>
        turnOf(request) === 0 ? { toolCalls: [{ name: 'meddle' }] } : { content: 'done' },
      );
      const outcome = await run(agent, 'go', { llm, store, runId: 'r1' });

      expect(outcome.status).toBe('failed');
      expect(outcome.error?.message).toMatch(
        /could not save a checkpoint: run r1 is at version \d+, not \d+: another writer/,
      );
      expect(await another().load('r1')).toEqual({ state: intruder, version: intruderVersion });
      expect(llm.requests).toHaveLength(1);
    });

    it('a run that loaded the stored conversation cannot overwrite a save made after it loaded', async () => {
      const { store, another } = stores();
      const agent = calculator([]);
      await run(agent, 'first question', { llm: scriptedLlm(twoSums), store, runId: 'r1' });
      // Another process saves the run right after this one has read it.
      let intruder: AgentState | undefined;
      let loads = 0;
      const racing: CheckpointStore = {
        ...store,
        load: async (runId) => {
          const loaded = await store.load(runId);
          if (++loads === 1 && loaded) {
            intruder = { ...loaded.state, answer: 'saved by another process' };
            await another().save(runId, intruder, loaded.version);
          }
          return loaded;
        },
        save: (runId, state, expected) => store.save(runId, state, expected),
      };
      const llm = scriptedLlm(twoSums);
      const outcome = await run(agent, 'next question', { llm, store: racing, runId: 'r1' });

      expect(outcome.status).toBe('failed');
      expect(outcome.error?.message).toMatch(/another writer saved it/);
      expect((await another().load('r1'))?.state).toEqual(intruder);
      expect(llm.requests).toHaveLength(0);
    });

    it('a run whose last save fails does not report itself as saved and finished', async () => {
      const { store, another } = stores();
      const full: CheckpointStore = {
        ...store,
        load: (runId) => store.load(runId),
        save: async (runId, state, expected) => {
          if (state.status === 'finished') throw new Error('disk full');
          return store.save(runId, state, expected);
        },
      };
      const outcome = await run(calculator([]), 'add', { llm: scriptedLlm(twoSums), store: full, runId: 'r1' });

      expect(outcome.status).toBe('failed');
      expect(outcome.error?.message).toBe('could not save a checkpoint: disk full');
      // What the store holds is the last state it saved: the run can be resumed from there.
      const stored = await another().load('r1');
      expect(stored?.state.status).toBe('awaiting_llm');
      const resumed = await resume(calculator([]), 'r1', { llm: scriptedLlm(twoSums), store: another() });
      expect(resumed).toMatchObject({ status: 'finished', answer: 'Sums: 3, 7 (for "add")' });
    });

    it('resuming a stored run under another run id saves the copy under that id and leaves the original', async () => {
      const { store, another } = stores();
      const added: string[] = [];
      const agent = calculator(added);
      await run(agent, 'add', {
        llm: scriptedLlm(twoSums),
        store,
        runId: 'r1',
        checkpoint: (state) => {
          if (state.status === 'awaiting_tools' && state.step === 2) throw new Error('the host went away');
        },
      });
      const original = await another().load('r1');

      const copy = await resume(agent, 'r1', { llm: scriptedLlm(twoSums), store: another(), runId: 'r1-copy' });
      expect(copy).toMatchObject({ status: 'finished', runId: 'r1-copy' });
      expect((await another().load('r1-copy'))?.state).toEqual(copy.state);
      expect(await another().load('r1')).toEqual(original);
    });

    it('refuses to resume a run the store does not have, or without a store, before anything is sent', async () => {
      const { store } = stores();
      const llm = scriptedLlm(twoSums);
      await expect(resume(calculator([]), 'missing', { llm, store })).rejects.toThrow(
        'run "missing" is not in the store',
      );
      await expect(
        resumeWith(calculator([]), 'missing', { type: 'approvalGiven', effectId: 'approval-1-0' }, { llm, store }),
      ).rejects.toThrow('run "missing" is not in the store');
      await expect(resume(calculator([]), 'missing', { llm })).rejects.toThrow(/needs a store/);
      await expect(resume(calculator([]), 'missing', { llm, store })).rejects.toMatchObject({
        name: 'InvalidStateError',
        code: 'RUN_NOT_FOUND',
      });
      expect(llm.requests).toHaveLength(0);
      expect(await store.list()).toEqual([]);
    });

    it('refuses a damaged stored state, naming the field, whether resumed or continued', async () => {
      const { store } = stores();
      const agent = calculator([]);
      await run(agent, 'first', { llm: scriptedLlm(twoSums), store, runId: 'good' });
      const good = await store.load('good');
      if (!good) throw new Error('the run was not stored');
      const damaged = { ...good.state, messages: null } as unknown as AgentState;
      await store.save('bad', damaged, 0);

      const llm = scriptedLlm(twoSums);
      await expect(resume(agent, 'bad', { llm, store })).rejects.toThrow(/saved state is damaged at messages/);
      await expect(run(agent, 'next', { llm, store, runId: 'bad' })).rejects.toThrow(/damaged at messages/);
      expect(llm.requests).toHaveLength(0);
      expect((await store.load('bad'))?.version).toBe(1);
    });
  });
}
