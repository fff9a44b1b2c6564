import { describe, expect, it } from 'vitest';
import { createAgent } from '../src/kernel/agent.js';
import { userMessage } from '../src/kernel/messages.js';
import { defaultPolicies } from '../src/kernel/policies.js';
import { initialState } from '../src/kernel/reducer.js';
import type { AgentState } from '../src/kernel/state.js';
import { run } from '../src/shell/run.js';
import { compactRunItem, createRunEmitter, type RunItem, type RunOutcome } from '../src/shell/runItems.js';
import { scriptedLlm } from '../src/testing/scriptedLlm.js';
import { echo } from './toolHelpers.js';

const origin = [{ tool: 'researcher', effectId: 'running-1-0' }];

/** A state well into a run: a long history the wire must not carry. */
const busy: AgentState = {
  ...initialState(),
  status: 'awaiting_tools',
  step: 4,
  requestSeq: 5,
  messages: Array.from({ length: 40 }, (_, i) => userMessage(`message ${i}`)),
  usage: { inputTokens: 120, outputTokens: 30, llmCalls: 4 },
};

const outcome: RunOutcome = {
  status: 'finished',
  finishReason: 'answered',
  answer: 'done',
  usage: busy.usage,
  pending: [],
  runId: 'run-1',
  state: { ...busy, status: 'finished', step: 7 },
};

describe('compactRunItem', () => {
  it('an event carries its status, step and usage instead of the whole state', () => {
    const event = { type: 'toolCompleted' as const, effectId: 'running-5-0', output: 'ok' };
    expect(compactRunItem({ type: 'event', event, state: busy })).toEqual({
      type: 'event',
      event,
      status: 'awaiting_tools',
      step: 4,
      usage: { inputTokens: 120, outputTokens: 30, llmCalls: 4 },
    });
  });

  it('a model request carries the number of its messages instead of the history', () => {
    const item: RunItem = {
      type: 'effect',
      effect: { type: 'callLlm', id: 'llm-5', request: { messages: busy.messages, tools: [], toolChoice: 'auto' } },
    };
    expect(compactRunItem(item)).toEqual({ type: 'effect', effect: { type: 'callLlm', id: 'llm-5', messages: 40 } });
  });

  it('any other effect is sent as it is', () => {
    const item: RunItem = {
      type: 'effect',
      effect: {
        type: 'callTool',
        id: 'running-5-0',
        call: { id: 'c1', name: 'echo', arguments: '{"text":"x"}' },
        args: { text: 'x' },
        parallelSafe: true,
      },
    };
    expect(compactRunItem(item)).toBe(item);
  });

  it('the result carries the step it ended at instead of the state', () => {
    expect(compactRunItem({ type: 'result', result: outcome })).toEqual({
      type: 'result',
      result: {
        status: 'finished',
        finishReason: 'answered',
        answer: 'done',
        usage: busy.usage,
        pending: [],
        runId: 'run-1',
        step: 7,
      },
    });
  });

  it('an observation is sent as it is', () => {
    const item: RunItem = { type: 'observation', observation: { kind: 'stepStarted', step: 1, maxSteps: 5 } };
    expect(compactRunItem(item)).toBe(item);
  });

  it('keeps where a child’s item came from, whatever its type', () => {
    const items: RunItem[] = [
      { type: 'event', event: { type: 'resumed' }, state: busy, origin },
      {
        type: 'effect',
        effect: { type: 'callLlm', id: 'llm-1', request: { messages: [], tools: [], toolChoice: 'auto' } },
        origin,
      },
      { type: 'result', result: outcome, origin },
      { type: 'observation', observation: { kind: 'memoryTrimmed', dropped: 2, shrunk: 0 }, origin },
    ];
    for (const item of items) expect(compactRunItem(item)).toMatchObject({ type: item.type, origin });
  });

  it('adds no origin to the run’s own items', () => {
    const items: RunItem[] = [
      { type: 'event', event: { type: 'resumed' }, state: busy },
      {
        type: 'effect',
        effect: { type: 'callLlm', id: 'llm-1', request: { messages: [], tools: [], toolChoice: 'auto' } },
      },
      { type: 'result', result: outcome },
    ];
    for (const item of items) expect('origin' in compactRunItem(item)).toBe(false);
  });

  it('keeps what a client receives per item small however long the run', async () => {
    const agent = createAgent({ name: 'a', tools: [echo], policies: defaultPolicies({ maxSteps: 60 }) });
    const llm = scriptedLlm([
      ...Array.from({ length: 30 }, (_, i) => ({
        toolCalls: [{ name: 'echo', arguments: { text: `x${i}`.repeat(50) } }],
      })),
      { content: 'done' },
    ]);
    const emitter = createRunEmitter();
    const sizes: number[] = [];
    for (const type of ['effect', 'event', 'observation', 'result'] as const)
      emitter.on(type, (item: RunItem) => sizes.push(JSON.stringify(compactRunItem(item)).length));
    const finished = await run(agent, 'go', { llm, emitter });
    expect(finished.answer).toBe('done');
    expect(JSON.stringify(finished.state).length).toBeGreaterThan(10_000);
    // The longest item is a tool call or its result: its own text, never the history.
    expect(Math.max(...sizes)).toBeLessThan(1_000);
  });
});

describe('createRunEmitter', () => {
  it('delivers each item to the listeners of its type only', () => {
    const emitter = createRunEmitter();
    const heard: string[] = [];
    emitter.on('observation', (item) => heard.push(`observation ${item.observation.kind}`));
    emitter.on('result', (item) => heard.push(`result ${item.result.answer}`));
    emitter.emit('observation', { type: 'observation', observation: { kind: 'memoryTrimmed', dropped: 1, shrunk: 0 } });
    emitter.emit('event', { type: 'event', event: { type: 'resumed' }, state: busy });
    emitter.emit('result', { type: 'result', result: outcome });
    expect(heard).toEqual(['observation memoryTrimmed', 'result done']);
  });
});
