// Figures only we have, measured in this process: reducer throughput and token counting cost.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createAgent,
  createFileStore,
  createMemoryStore,
  createStrReplaceEditor,
  defaultPolicies,
  defineAgent,
  defineTool,
  run,
} from '@openmanus/core';
import { assistantMessage, createStep, initialState, loadTokenizer, requestTokens } from '@openmanus/core/kernel';
import { scriptedLlm, toolSession } from '@openmanus/core/testing';
import { z } from 'zod';

const schema = { type: 'object', properties: { a: { type: 'number' } } };

/** Transitions per second on a state holding ~100 messages (a tool result in, a model reply in). */
export function reducerThroughput() {
  const config = defineAgent({
    name: 'r',
    tools: [{ name: 'add', description: 'Add', parameters: schema }],
    memory: { maxMessages: 100_000 },
  });
  const step = createStep(defaultPolicies({ maxSteps: 10_000 }));
  let [state] = step(config, initialState(), { type: 'started', input: 'Keep adding.' });
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

// The in-process runs' tool and model: one `add` call per step, then an answer.
const add = defineTool({
  name: 'add',
  description: 'Add',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => String(a + b),
});
const addingModel = (steps) =>
  scriptedLlm((_request, i) =>
    i < steps ? { toolCalls: [{ id: `c${i}`, name: 'add', arguments: { a: i, b: 1 } }] } : { content: 'done' },
  );

/** µs per step of our own work (interpreter + reducer + a tool), with an instant in-process model. */
export async function ownWorkPerStep(steps) {
  const agent = createAgent({
    name: 'own',
    tools: [add],
    policies: defaultPolicies({ maxSteps: steps + 1 }),
    memory: { maxMessages: 100_000 },
  });
  const model = () => addingModel(steps);
  for (let i = 0; i < 3; i++) await run(agent, 'go', { llm: model() });
  const reps = Math.max(3, Math.round(4000 / steps));
  const started = performance.now();
  for (let i = 0; i < reps; i++) await run(agent, 'go', { llm: model() });
  return ((performance.now() - started) / reps / (steps + 1)) * 1000;
}

/**
 * µs per step of a run checkpointed after every transition, at the start and at the end of a
 * long run: through the file store (appends what changed), the memory store, and a naive hook
 * that writes the whole state as JSON each time. Flat is the goal: step 2,000 costs what step 10 does.
 */
export async function checkpointedRuns(steps) {
  const agent = createAgent({ name: 'saved', tools: [add], policies: defaultPolicies({ maxSteps: steps + 1 }) });
  const model = () => addingModel(steps);
  const dir = mkdtempSync(join(tmpdir(), 'openmanus-bench-'));
  const timed = async (options) => {
    const stamps = [];
    const emitterless = {
      ...options,
      checkpoint: async (state) => {
        await options.checkpoint?.(state);
        if (state.status === 'awaiting_llm') stamps.push(performance.now());
      },
    };
    const started = performance.now();
    await run(agent, 'go', { llm: model(), ...emitterless });
    const total = performance.now() - started;
    // µs per step over the first and the last tenth of the run (medians: a GC pause is not a trend).
    const tenth = Math.max(3, Math.floor(stamps.length / 10));
    const span = (from, to) => {
      const gaps = [];
      for (let i = from + 1; i <= to; i++) gaps.push(stamps[i] - stamps[i - 1]);
      return gaps.sort((a, b) => a - b)[Math.floor(gaps.length / 2)] * 1000;
    };
    return { first: span(0, tenth), last: span(stamps.length - 1 - tenth, stamps.length - 1), totalMs: total };
  };
  try {
    await timed({}); // warm-up: compare optimised code
    const none = await timed({});
    const memory = await timed({ store: createMemoryStore(), runId: 'm' });
    const file = await timed({ store: createFileStore(dir), runId: 'f' });
    const naive = await timed({ checkpoint: (state) => writeFileSync(join(dir, 'naive.json'), JSON.stringify(state)) });
    return { steps, none, memory, file, naive };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** str_replace_editor operations per second (create, view, str_replace on small files), through the real tool. */
export async function editorOpsPerSecond(rounds = 300) {
  const workspace = mkdtempSync(join(tmpdir(), 'openmanus-editor-'));
  const session = toolSession(createStrReplaceEditor({ workspace }));
  try {
    const started = performance.now();
    for (let i = 0; i < rounds; i++) {
      const path = join(workspace, `f${i}.txt`);
      await session.call({ command: 'create', path, file_text: `line one\n\tline ${i}\nline three\n` });
      await session.call({ command: 'view', path });
      await session.call({ command: 'str_replace', path, old_str: 'line three', new_str: 'line 3' });
    }
    return (3 * rounds) / ((performance.now() - started) / 1000);
  } finally {
    await session.close();
    rmSync(workspace, { recursive: true, force: true });
  }
}
