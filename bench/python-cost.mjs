// The hidden cost of the Python sandbox: python_execute's time per call (a `print(1)`) under each
// isolation this host offers, median over N calls, beside a bare `python3 -c` for reference.
// Run after a build: `pnpm build && node bench/python-cost.mjs` (PYTHON_COST_CALLS=30 by default).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createPythonExecute } from '@openmanus/core';
import { toolSession } from '@openmanus/core/testing';

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

const bwrapWorks = () => {
  try {
    execFileSync('bwrap', ['--unshare-all', '--ro-bind', '/', '/', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/** Milliseconds per python_execute call under each mode available here: { mode: { median, p90 } }. */
export async function pythonCost({ calls = 30 } = {}) {
  const workspace = await mkdtemp(join(tmpdir(), 'openmanus-python-cost-'));
  const modes = [
    ...(bwrapWorks() ? [['bwrap', 'bubblewrap']] : []),
    ['none', process.getuid?.() === 0 ? 'no bubblewrap: a separate uid per call' : 'no bubblewrap: same user'],
  ];
  const results = {};
  const system = ['/usr/bin/python3', '/usr/local/bin/python3'].find((p) => existsSync(p));
  const bare = [
    ['python3', 'bare `python3 -c` on PATH (reference)'],
    ...(system ? [[system, `bare \`${system} -c\` (reference)`]] : []),
  ];
  const samples = new Map([...bare, ...modes].map(([, label]) => [label, []]));
  try {
    const sessions = modes.map(([sandbox, label]) => [label, toolSession(createPythonExecute({ workspace, sandbox }))]);
    // Warm-up (and the one-time probes), then the modes interleaved so a busy host hurts them alike.
    for (const [, session] of sessions) await session.call({ code: 'print(1)' });
    for (let i = 0; i < calls; i++) {
      for (const [python, label] of bare) {
        const started = performance.now();
        execFileSync(python, ['-c', 'print(1)']);
        samples.get(label).push(performance.now() - started);
      }
      for (const [label, session] of sessions) {
        const started = performance.now();
        const result = await session.call({ code: 'print(1)' });
        samples.get(label).push(performance.now() - started);
        if (result.output !== '1') throw new Error(`${label}: unexpected output ${result.output}`);
      }
    }
    for (const [label, times] of samples) results[label] = { median: median(times), p90: quantile(times, 0.9) };
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
  return results;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const calls = Number(process.env.PYTHON_COST_CALLS ?? 30);
  const results = await pythonCost({ calls });
  console.log(`python_execute cost per call (print(1)), ${calls} calls each:`);
  for (const [label, { median: m, p90 }] of Object.entries(results))
    console.log(`  ${label.padEnd(42)} median ${m.toFixed(1)} ms   p90 ${p90.toFixed(1)} ms`);
}
