// ms per step of a 1-tool loop at 50 and 400 steps: our interpreter against a hand-written loop
// on the raw openai SDK, same process, same server, interleaved repetitions, medians.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createAgent, createOpenAiLlm, defineTool, run } from '@openmanus/core';
import OpenAI from 'openai';
import { z } from 'zod';

const REPS = Number(process.env.BENCH_REPS ?? 7);
const STEP_COUNTS = [50, 400];

const child = spawn(process.execPath, [new URL('./server.js', import.meta.url).pathname], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const [line] = await once(child.stdout, 'data');
const baseURL = String(line).trim();

const client = new OpenAI({ apiKey: 'bench', baseURL, maxRetries: 0 });
const toolSchema = {
  type: 'object',
  properties: { a: { type: 'number' }, b: { type: 'number' } },
  required: ['a', 'b'],
};

async function rawLoop(steps) {
  const messages = [
    { role: 'system', content: 'You add numbers.' },
    { role: 'user', content: 'Keep adding.' },
  ];
  const tools = [
    { type: 'function', function: { name: 'add', description: 'Add two numbers', parameters: toolSchema } },
  ];
  for (;;) {
    const completion = await client.chat.completions.create({
      model: `steps-${steps}`,
      messages,
      tools,
      tool_choice: 'auto',
    });
    const message = completion.choices[0].message;
    messages.push(message);
    if (!message.tool_calls?.length) return message.content;
    for (const call of message.tool_calls) {
      const { a, b } = JSON.parse(call.function.arguments);
      messages.push({ role: 'tool', tool_call_id: call.id, content: String(a + b) });
    }
  }
}

const add = defineTool({
  name: 'add',
  description: 'Add two numbers',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => String(a + b),
});

// One client per model name, as a service would hold it.
const llms = Object.fromEntries(
  [20, ...STEP_COUNTS].map((steps) => [
    steps,
    createOpenAiLlm({ model: `steps-${steps}`, apiKey: 'bench', baseURL, maxRetries: 0 }),
  ]),
);

async function ours(steps) {
  // The whole history is sent, as in the raw loop, so both carry the same payload.
  const agent = createAgent({
    name: 'bench',
    systemPrompt: 'You add numbers.',
    tools: [add],
    maxSteps: steps + 1,
    memory: { maxMessages: 100_000 },
  });
  const llm = llms[steps];
  const result = await run(agent, 'Keep adding.', { llm });
  if (result.answer !== 'done') throw new Error(`run ended with ${result.finishReason}: ${result.error}`);
  return result.answer;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const contenders = { 'raw openai loop': rawLoop, '@openmanus/core': ours };
const times = {};

// Warm-up, then interleaved repetitions so drift hits every contender alike.
for (const fn of Object.values(contenders)) await fn(20);
for (let rep = 0; rep < REPS; rep++) {
  for (const steps of STEP_COUNTS) {
    // Alternate who goes first, and start each run from a collected heap, so neither pays for the other's garbage.
    const order = Object.entries(contenders);
    if (rep % 2 === 1) order.reverse();
    for (const [name, fn] of order) {
      globalThis.gc?.();
      const started = performance.now();
      await fn(steps);
      const perStep = (performance.now() - started) / (steps + 1);
      const key = `${name}@${steps}`;
      times[key] = [...(times[key] ?? []), perStep];
    }
  }
}
child.kill('SIGTERM');

const rows = STEP_COUNTS.map((steps) => {
  const raw = median(times[`raw openai loop@${steps}`]);
  const our = median(times[`@openmanus/core@${steps}`]);
  return { steps, raw, our, ratio: our / raw };
});
console.log(
  `\n1-tool loop, ms per step (median of ${REPS}), Node ${process.version}, ${new Date().toISOString().slice(0, 10)}\n`,
);
console.log('| steps | raw openai loop | @openmanus/core | ratio |');
console.log('|---:|---:|---:|---:|');
for (const r of rows)
  console.log(`| ${r.steps} | ${r.raw.toFixed(3)} | ${r.our.toFixed(3)} | ${r.ratio.toFixed(2)}x |`);
const growth = (key) => median(times[`${key}@400`]) / median(times[`${key}@50`]);
console.log(
  `\ngrowth 50→400 steps: raw ${growth('raw openai loop').toFixed(2)}x, ours ${growth('@openmanus/core').toFixed(2)}x`,
);
