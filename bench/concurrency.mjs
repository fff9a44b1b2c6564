// Many runs in one process: N runs started at once against the bench's model server (its own
// process). Reports the event loop's worst delay, the memory per run at the peak, and the memory
// left once they have all finished. Usage: node --expose-gc concurrency.mjs [runs]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createAgent, createOpenAiLlm, defineTool, run } from '@openmanus/core';

const runs = Number(process.argv[2] ?? 1000);
const steps = 3;
const server = spawn(process.execPath, [new URL('./server.js', import.meta.url).pathname], {
  stdio: ['pipe', 'pipe', 'inherit'],
});
const [line] = await once(server.stdout, 'data');
const { baseURL } = JSON.parse(String(line));

const add = defineTool({
  name: 'add',
  description: 'Add two numbers',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  parallelSafe: true,
  execute: ({ a, b }) => String(a + b),
});
const agent = createAgent({ name: 'adder', systemPrompt: 'You add numbers.', tools: [add], maxSteps: 50 });
const llm = createOpenAiLlm({ model: `steps-${steps}`, apiKey: 'bench', baseURL, maxRetries: 0, timeoutMs: 600_000 });

const settle = async () => {
  for (let i = 0; i < 3; i++) {
    globalThis.gc?.();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};
// Warm up (JIT, inline caches, the connection pool) with a burst of its own, then measure from a settled baseline.
await Promise.all(Array.from({ length: 200 }, (_, i) => run(agent, `warm ${i}`, { llm })));
await settle();
const baseline = process.memoryUsage().rss;
const baseHeap = process.memoryUsage().heapUsed;
let peak = baseline;
const sampler = setInterval(() => {
  peak = Math.max(peak, process.memoryUsage().rss);
}, 5);
const delay = monitorEventLoopDelay({ resolution: 5 });
delay.enable();
const started = performance.now();
const outcomes = await Promise.all(Array.from({ length: runs }, (_, i) => run(agent, `task ${i}`, { llm })));
const seconds = (performance.now() - started) / 1000;
delay.disable();
clearInterval(sampler);
peak = Math.max(peak, process.memoryUsage().rss);
const failed = outcomes.filter((o) => o.status !== 'finished').length;
await settle();
const after = process.memoryUsage().rss;
const afterHeap = process.memoryUsage().heapUsed;
const mb = (bytes) => Math.round((bytes / 1e6) * 10) / 10;
console.log(
  JSON.stringify({
    runs,
    failed,
    seconds: Math.round(seconds * 100) / 100,
    peakMb: mb(peak - baseline),
    kbPerRun: Math.round((peak - baseline) / runs / 1000),
    worstDelayMs: Math.round(delay.max / 1e6),
    p99DelayMs: Math.round(delay.percentile(99) / 1e6),
    leftMb: mb(after - baseline),
    heapLeftMb: mb(afterHeap - baseHeap),
  }),
);
server.kill();
process.exit(0);
