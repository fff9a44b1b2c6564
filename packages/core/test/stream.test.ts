import { describe, expect, it } from 'vitest';
import { createAgent } from '../src/kernel/agent.js';
import type { HostEffect } from '../src/kernel/effects.js';
import { defaultPolicies } from '../src/kernel/policies.js';
import { initialState, type StepFunction, step } from '../src/kernel/reducer.js';
import type { AgentState } from '../src/kernel/state.js';
import { createMemoryStore } from '../src/shell/memoryStore.js';
import { InvalidStateError } from '../src/shell/restore.js';
import { RunInProgressError, resume, run, stream } from '../src/shell/run.js';
import { createRunEmitter, type RunItem, type RunOutcome } from '../src/shell/runItems.js';
import { scriptedLlm } from '../src/testing/scriptedLlm.js';
import { askHuman } from '../src/tools/askHuman.js';
import { echo } from './toolHelpers.js';

const collect = async (items: AsyncIterable<RunItem>) => {
  const all: RunItem[] = [];
  for await (const item of items) all.push(item);
  return all;
};

const png = { base64: 'iVBORw0KGgo=', mimeType: 'image/png' as const };

describe('stream', () => {
  it('yields each item while the run is still going, not once it has ended', async () => {
    const agent = createAgent({ name: 'a', tools: [askHuman] });
    const llm = scriptedLlm([
      { toolCalls: [{ name: 'ask_human', arguments: { inquire: 'Which city?' } }] },
      { content: 'Kyoto it is' },
    ]);
    // The person answers only once the consumer has seen the question: a stream that held
    // its items back until the end would never get there.
    let seeQuestion: () => void = () => {};
    const questionSeen = new Promise<void>((resolve) => {
      seeQuestion = resolve;
    });
    const items: RunItem[] = [];
    for await (const item of stream(agent, 'plan a trip', {
      llm,
      onHuman: async () => {
        await questionSeen;
        return 'Kyoto';
      },
    })) {
      items.push(item);
      if (item.type === 'effect' && item.effect.type === 'askHuman') seeQuestion();
    }
    expect(items.at(-1)).toMatchObject({ type: 'result', result: { answer: 'Kyoto it is' } });
  });

  it('keeps the items of a run nobody reads yet, in order, the result last', async () => {
    const agent = createAgent({ name: 'a', tools: [echo] });
    const llm = scriptedLlm([{ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }] }, { content: 'done' }]);
    const emitter = createRunEmitter();
    const emitted: RunItem[] = [];
    for (const type of ['effect', 'event', 'observation'] as const) emitter.on(type, (item) => emitted.push(item));
    const ended = new Promise<RunOutcome>((resolve) => emitter.on('result', (item) => resolve(item.result)));
    const iterator = stream(agent, 'go', { llm, emitter });
    const outcome = await ended;
    // Read only now, after the run has ended.
    const items = await collect(iterator);
    expect(items.slice(0, -1)).toEqual(emitted);
    expect(items.at(-1)).toEqual({ type: 'result', result: outcome });
    expect(items.filter((i) => i.type === 'result')).toHaveLength(1);
    expect(await iterator.next()).toEqual({ value: undefined, done: true });
  });

  it('is its own async iterator', () => {
    const iterator = stream(createAgent({ name: 'a' }), 'go', { llm: scriptedLlm([{ content: 'x' }]) });
    expect(iterator[Symbol.asyncIterator]()).toBe(iterator);
    return collect(iterator);
  });

  it('starts the task with its image', async () => {
    const llm = scriptedLlm([{ content: 'a cat' }]);
    const items = await collect(stream(createAgent({ name: 'a' }), 'what is this?', { llm, image: png }));
    expect(items[0]).toMatchObject({ type: 'event', event: { type: 'started', input: 'what is this?', image: png } });
    expect(llm.requests[0]?.messages.at(-1)).toMatchObject({ role: 'user', content: 'what is this?', image: png });
  });

  it('a host’s signal cancels the streamed run, and the result says why', async () => {
    const controller = new AbortController();
    const agent = createAgent({ name: 'a', tools: [echo], policies: defaultPolicies({ maxSteps: 1000 }) });
    const llm = scriptedLlm(() => ({ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }] }));
    const items: RunItem[] = [];
    for await (const item of stream(agent, 'loop', { llm, signal: controller.signal })) {
      items.push(item);
      if (item.type === 'event' && item.state.step === 2) controller.abort('enough');
    }
    expect(items.at(-1)).toMatchObject({
      type: 'result',
      result: { status: 'finished', finishReason: 'cancelled', error: { code: 'CANCELLED', message: 'enough' } },
    });
  });

  describe('a run that cannot start makes the iterator throw', () => {
    it('a state that is still running or paused', async () => {
      const [running] = step(createAgent({ name: 'a' }).config, initialState(), { type: 'started', input: 'x' });
      const llm = scriptedLlm([{ content: 'never' }]);
      const iterator = stream(createAgent({ name: 'a' }), 'another task', { llm, state: running });
      await expect(iterator.next()).rejects.toThrow(InvalidStateError);
      expect(llm.requests).toHaveLength(0);
    });

    it('a damaged state in the store', async () => {
      const store = createMemoryStore();
      const [started] = step(createAgent({ name: 'a' }).config, initialState(), { type: 'started', input: 'x' });
      await store.save('run-1', { ...started, status: 'finished', messages: null } as unknown as AgentState, 0);
      const llm = scriptedLlm([{ content: 'never' }]);
      const iterator = stream(createAgent({ name: 'a' }), 'go on', { llm, store, runId: 'run-1' });
      await expect(iterator.next()).rejects.toThrow(/messages/);
      expect(llm.requests).toHaveLength(0);
    });

    it('a state another run is running', async () => {
      // A step that keeps the state it was given while a host effect of its own is in flight.
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let effectStarted: () => void = () => {};
      const started = new Promise<void>((resolve) => {
        effectStarted = resolve;
      });
      const holding: StepFunction = (config, state, event) => {
        if (event.type === 'started') return [state, [{ type: 'host:hold', id: 'hold-1' } satisfies HostEffect]];
        if (event.type === 'host:held') return [state, []];
        return step(config, state, event);
      };
      const agent = createAgent({ name: 'a', step: holding });
      const state = initialState();
      const first = run(agent, 'first', {
        llm: scriptedLlm([]),
        state,
        performers: {
          'host:hold': async () => {
            effectStarted();
            await held;
            return { type: 'host:held' };
          },
        },
      });
      await started;
      const llm = scriptedLlm([{ content: 'never' }]);
      const iterator = stream(agent, 'second', { llm, state });
      await expect(iterator.next()).rejects.toThrow(RunInProgressError);
      expect(llm.requests).toHaveLength(0);
      release();
      await first;
    });
  });
});

describe('run', () => {
  it('starts the task with its image', async () => {
    const llm = scriptedLlm([{ content: 'a cat' }]);
    const outcome = await run(createAgent({ name: 'a' }), 'what is this?', { llm, image: png });
    expect(outcome.state.messages[0]).toEqual({ role: 'user', content: 'what is this?', image: png });
    expect(llm.requests[0]?.messages.at(-1)).toMatchObject({ image: png });
  });

  it('keeps the run id of the state it continues, unless the host names another', async () => {
    const agent = createAgent({ name: 'a' });
    const first = await run(agent, 'hi', { llm: scriptedLlm([{ content: 'a' }]) });
    expect(first.runId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(first.state.runId).toBe(first.runId);
    const second = await run(agent, 'again', { llm: scriptedLlm([{ content: 'b' }]), state: first.state });
    expect(second.runId).toBe(first.runId);
    const renamed = await run(agent, 'more', { llm: scriptedLlm([{ content: 'c' }]), state: first.state, runId: 'r' });
    expect(renamed.runId).toBe('r');
  });

  it('once it has returned, any state it passed through can be resumed', async () => {
    const agent = createAgent({ name: 'a', tools: [echo] });
    const checkpoints: AgentState[] = [];
    const llm = scriptedLlm([{ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }] }, { content: 'done' }]);
    await run(agent, 'go', { llm, checkpoint: (state) => void checkpoints.push(state) });
    const midway = checkpoints.find((state) => state.status === 'awaiting_llm' && state.step === 2);
    expect(midway).toBeDefined();
    const again = await resume(agent, midway, { llm: scriptedLlm([{ content: 'done again' }]) });
    expect(again.answer).toBe('done again');
  });

  it('once it has returned, the state it was given and the one it ended with can be run again', async () => {
    const agent = createAgent({ name: 'a' });
    const given = initialState();
    const first = await run(agent, 'hi', { llm: scriptedLlm([{ content: 'a' }]), state: given });
    const fromGiven = await run(agent, 'hi again', { llm: scriptedLlm([{ content: 'b' }]), state: given });
    expect(fromGiven.answer).toBe('b');
    const fromEnd = await run(agent, 'more', { llm: scriptedLlm([{ content: 'c' }]), state: first.state });
    expect(fromEnd.answer).toBe('c');
    const fromEndAgain = await run(agent, 'more', { llm: scriptedLlm([{ content: 'd' }]), state: first.state });
    expect(fromEndAgain.answer).toBe('d');
  });
});
