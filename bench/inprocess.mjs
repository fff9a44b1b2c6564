// Figures only we have, measured in this process: reducer throughput and token counting cost.
import {
  assistantMessage,
  createAgent,
  defineAgent,
  defineTool,
  initialStep,
  loadTokenizer,
  requestTokens,
  run,
  step,
} from '@openmanus/core';
import { scriptedLlm } from '@openmanus/core/testing';
import { z } from 'zod';

const schema = { type: 'object', properties: { a: { type: 'number' } } };

/** Transitions per second on a state holding ~100 messages (a tool result in, a model reply in). */
export function reducerThroughput() {
  const config = defineAgent({
    name: 'r',
    tools: [{ name: 'add', description: 'Add', parameters: schema }],
    maxSteps: 10_000,
    memory: { maxMessages: 100_000 },
  });
  let [state] = initialStep(config, 'Keep adding.');
  const call = (i, effectId) => ({
    type: 'llmResponded',
    effectId,
    content: '',
    toolCalls: [{ id: `c${i}`, name: 'add', arguments: `{"a":${i}}` }],
  });
  for (let i = 0; state.messages.length < 100; i++) {
    [state] = step(config, state, call(i, `llm-${state.requestSeq}`));
    [state] = step(config, state, {
      type: 'toolCompleted',
      effectId: `running-${state.requestSeq}-0`,
      output: String(i),
    });
  }
  const awaitingLlm = state;
  const reply = call(999_999, `llm-${awaitingLlm.requestSeq}`);
  const [awaitingTool] = step(config, awaitingLlm, reply);
  const replied = { type: 'toolCompleted', effectId: `running-${awaitingTool.requestSeq}-0`, output: '1' };
  const n = 20_000;
  const started = performance.now();
  for (let i = 0; i < n; i++) {
    step(config, awaitingLlm, reply);
    step(config, awaitingTool, replied);
  }
  const seconds = (performance.now() - started) / 1000;
  return { messages: awaitingLlm.messages.length, transitionsPerSecond: (2 * n) / seconds };
}

/** µs to count a long run's request per step, with the per-message memo and without it. */
export async function tokenCounting() {
  await loadTokenizer('cl100k_base');
  const messages = [];
  for (let i = 0; i < 400; i++) {
    messages.push(
      assistantMessage(`step ${i}: adding ${i} and ${i + 1}`, [
        { id: `c${i}`, name: 'add', arguments: `{"a":${i},"b":${i + 1}}` },
      ]),
    );
    messages.push({ role: 'tool', content: String(2 * i + 1), toolCallId: `c${i}`, name: 'add' });
  }
  const request = { messages, tools: [], toolChoice: 'auto' };
  requestTokens(request, 'cl100k_base');
  const reps = 200;
  let started = performance.now();
  for (let i = 0; i < reps; i++) requestTokens(request, 'cl100k_base');
  const memoUs = ((performance.now() - started) / reps) * 1000;
  started = performance.now();
  for (let i = 0; i < 5; i++) requestTokens({ ...request, messages: messages.map((m) => ({ ...m })) }, 'cl100k_base');
  const freshUs = ((performance.now() - started) / 5) * 1000;
  return { messages: messages.length, memoUs, freshUs };
}

/** µs per step of our own work (interpreter + reducer + a tool), with an instant in-process model. */
export async function ownWorkPerStep(steps) {
  const add = defineTool({
    name: 'add',
    description: 'Add',
    parameters: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }) => String(a + b),
  });
  const agent = createAgent({ name: 'own', tools: [add], maxSteps: steps + 1, memory: { maxMessages: 100_000 } });
  const model = () =>
    scriptedLlm((_request, i) =>
      i < steps ? { toolCalls: [{ id: `c${i}`, name: 'add', arguments: { a: i, b: 1 } }] } : { content: 'done' },
    );
  for (let i = 0; i < 3; i++) await run(agent, 'go', { llm: model() });
  const reps = Math.max(3, Math.round(4000 / steps));
  const started = performance.now();
  for (let i = 0; i < reps; i++) await run(agent, 'go', { llm: model() });
  return ((performance.now() - started) / reps / (steps + 1)) * 1000;
}
