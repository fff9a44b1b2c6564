import { describe, expect, it } from 'vitest';
import { createAgent } from '../src/kernel/agent.js';
import { pendingInputs } from '../src/kernel/reducer.js';
import { createMemoryStore } from '../src/shell/memoryStore.js';
import { InvalidStateError } from '../src/shell/restore.js';
import { run, streamResume, streamResumeWith } from '../src/shell/run.js';
import type { RunItem } from '../src/shell/runItems.js';
import { scriptedLlm } from '../src/testing/scriptedLlm.js';
import { echo } from './toolHelpers.js';

const collect = async (items: AsyncIterable<RunItem>) => {
  const all: RunItem[] = [];
  for await (const item of items) all.push(item);
  return all;
};

/** A run paused on an approval of `echo`, in a store. */
async function pausedRun() {
  const agent = createAgent({ name: 'a', tools: [echo] });
  const store = createMemoryStore();
  const llm = scriptedLlm([{ toolCalls: [{ name: 'echo', arguments: { text: 'hi' } }] }, { content: 'echoed' }]);
  const options = { llm, store, runId: 'r1', approvals: ['echo'] };
  const paused = await run(agent, 'say hi', options);
  expect(paused.status).toBe('awaiting_approval');
  const [input] = pendingInputs(agent.config, paused.state);
  if (!input) throw new Error('no pending input');
  return { agent, store, options, effectId: input.effectId };
}

describe('streamResumeWith', () => {
  it('yields the items of the answered run, the tool call then the result', async () => {
    const { agent, options, effectId } = await pausedRun();
    const items = await collect(streamResumeWith(agent, 'r1', { type: 'approvalGiven', effectId }, options));
    const types = items.map((item) => (item.type === 'event' ? item.event.type : item.type));
    expect(types[0]).toBe('approvalGiven');
    expect(types).toContain('toolCompleted');
    expect(items.at(-1)).toMatchObject({ type: 'result', result: { status: 'finished', answer: 'echoed' } });
  });

  it('throws an answer the run does not wait for from the iterator, and changes nothing', async () => {
    const { agent, store, options } = await pausedRun();
    const before = await store.load('r1');
    const iterator = streamResumeWith(agent, 'r1', { type: 'approvalGiven', effectId: 'nope' }, options);
    await expect(collect(iterator)).rejects.toSatisfy(
      (error) => InvalidStateError.isInstance(error) && error.code === 'RUN_NOT_WAITING',
    );
    expect(await store.load('r1')).toEqual(before);
  });

  it('cancels the run when the consumer leaves the loop early', async () => {
    const { agent, store, options, effectId } = await pausedRun();
    for await (const item of streamResumeWith(agent, 'r1', { type: 'approvalGiven', effectId }, options)) {
      if (item.type === 'event') break;
    }
    const saved = await store.load('r1');
    expect(saved?.state).toMatchObject({ finishReason: 'cancelled' });
  });
});

describe('streamResume', () => {
  it('continues a stored run, asking again for what it waited for, and yields its items', async () => {
    const { agent, store, options } = await pausedRun();
    const items = await collect(streamResume(agent, 'r1', { ...options, onApproval: async () => true }));
    expect(items.some((item) => item.type === 'event' && item.event.type === 'toolCompleted')).toBe(true);
    expect(items.at(-1)).toMatchObject({ type: 'result', result: { status: 'finished', answer: 'echoed' } });
    expect((await store.load('r1'))?.state.status).toBe('finished');
  });
});
