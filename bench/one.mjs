// One measurement in a fresh process: node --expose-gc --import ./guard.mjs one.mjs <contender> <scenario> <server-json>
import { existsSync } from 'node:fs';

// Prints one JSON line. Scenarios: import | loop50 | loop400 | stream50 | stream400 | parallel.
const [contender, scenario, serverJson] = process.argv.slice(2);
const { baseURL, stats } = JSON.parse(serverJson ?? '{}');
// Ours and the raw loop live in ./contenders, the peers (with their own node_modules) in ./peers/contenders.
const dir = [new URL('./contenders/', import.meta.url), new URL('./peers/contenders/', import.meta.url)].find((d) =>
  existsSync(new URL(`${contender}.mjs`, d)),
);
if (!dir) throw new Error(`unknown contender ${contender}`);

if (scenario === 'import') {
  const [{ load }, { entry }] = await Promise.all([
    import(new URL('load.mjs', dir)),
    import(new URL(`${contender}.mjs`, dir)),
  ]);
  // The contender module above imported the entries already: time them in a process of their own.
  const { spawnSync } = await import('node:child_process');
  // The process's peak RSS once the entries are loaded: what importing them costs in memory before any work.
  const script = `const s=performance.now();const {load}=await import(${JSON.stringify(new URL('load.mjs', dir).href)});for(const e of ${JSON.stringify(entry)})await load(e);console.log(JSON.stringify({ms:performance.now()-s,rssMB:process.resourceUsage().maxRSS/1024}))`;
  const timed = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  if (timed.status !== 0) throw new Error(timed.stderr);
  void load;
  const { ms, rssMB } = JSON.parse(timed.stdout.trim());
  console.log(JSON.stringify({ importMs: ms, importRssMB: rssMB }));
  process.exit(0);
}

const completions = async () => (await (await fetch(stats)).json()).completions;
const shapes = {
  loop50: { steps: 50, parallel: 1, delay: 0 },
  loop400: { steps: 400, parallel: 1, delay: 0 },
  // The same loops with the replies streamed: each contender in its streaming mode, every piece handed on.
  stream50: { steps: 50, parallel: 1, delay: 0, stream: true },
  stream400: { steps: 400, parallel: 1, delay: 0, stream: true },
  parallel: { steps: 10, parallel: 5, delay: 50 },
};
const shape = shapes[scenario];
if (!shape) throw new Error(`unknown scenario ${scenario}`);
const { create } = await import(new URL(`${contender}.mjs`, dir));
const { shown } = await import(new URL('./contenders/shared.mjs', import.meta.url));
const runTask = create({ baseURL, toolDelayMs: shape.delay, stream: shape.stream === true });
const model = shape.parallel > 1 ? `steps-${shape.steps}-x${shape.parallel}` : `steps-${shape.steps}`;

// Warm-up (JIT, connections) long enough that every contender's code is optimised, then measured
// runs, each from a collected heap. The fastest run of the process counts: on a shared 2-core
// machine the slower ones measure the neighbours.
await runTask(shape.parallel > 1 ? `steps-3-x${shape.parallel}` : 'steps-50');
let elapsed = Number.POSITIVE_INFINITY;
for (let run = 0; run < 2; run++) {
  globalThis.gc?.();
  const before = await completions();
  const piecesBefore = shown.pieces;
  const started = performance.now();
  const answer = await runTask(model);
  elapsed = Math.min(elapsed, performance.now() - started);
  const served = (await completions()) - before;
  if (answer !== 'done') throw new Error(`${contender} ended with ${JSON.stringify(answer)}`);
  // Every turn must have been a real round trip to the model: N tool turns plus the final answer.
  if (served !== shape.steps + 1)
    throw new Error(`${contender}: the server saw ${served} completions, expected ${shape.steps + 1}`);
  // A streaming contender must really have streamed: every turn's pieces reached its consumer.
  const pieces = shown.pieces - piecesBefore;
  if (shape.stream && pieces < shape.steps + 1)
    throw new Error(`${contender}: ${pieces} streamed pieces reached the consumer in ${shape.steps + 1} turns`);
}
// Retained heap: what the run left behind once its garbage is collected.
globalThis.gc?.();
const memory = process.memoryUsage();
console.log(
  JSON.stringify({
    msPerStep: elapsed / (shape.steps + 1),
    rssMB: process.resourceUsage().maxRSS / 1024,
    heapMB: memory.heapUsed / 1024 / 1024,
  }),
);
