// What a sandbox costs per provider: the time to make one (a run's first tool call pays it) and one
// python_execute call (`print(1)`) through it, median over N. Docker counts only where a daemon and
// the test image are there (`bash scripts/docker.sh start && bash scripts/docker.sh image`).
// Run after a build: `node bench/sandbox-cost.mjs` (SANDBOX_COST_CALLS=10 by default).
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createLocalSandboxProvider, createPythonExecute } from '@openmanus/core';
import { toolSession } from '@openmanus/core/testing';

const IMAGE = 'openmanus-sandbox:bookworm';
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const dockerReady = () => {
  try {
    execFileSync('docker', ['image', 'inspect', IMAGE], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

async function providers(workspace) {
  const list = [
    ['local (bubblewrap)', createLocalSandboxProvider({ isolation: 'bwrap', workspace })],
    ['local (no bubblewrap)', createLocalSandboxProvider({ isolation: 'none', workspace })],
  ];
  if (dockerReady()) {
    const { createDockerSandboxProvider } = await import('@openmanus/sandbox');
    list.push(['docker', createDockerSandboxProvider({ image: IMAGE, workspace })]);
  }
  return list;
}

/** { provider: { startMs, callMs } }: medians; providers that cannot run here are left out. */
export async function sandboxCost({ calls = 10 } = {}) {
  const workspace = await mkdtemp(join(tmpdir(), 'openmanus-sandbox-cost-'));
  const results = {};
  try {
    for (const [label, provider] of await providers(workspace)) {
      const starts = [];
      const times = [];
      for (let i = 0; i < calls; i++) {
        const session = toolSession(createPythonExecute({ workspace }), { sandbox: provider, runId: `cost-${i}` });
        try {
          // The first call makes the sandbox; the second is a call into a sandbox that is there.
          let started = performance.now();
          const first = await session.call({ code: 'print(1)' });
          starts.push(performance.now() - started);
          started = performance.now();
          const second = await session.call({ code: 'print(1)' });
          times.push(performance.now() - started);
          if (first.output !== '1' || second.output !== '1')
            throw new Error(`${label}: ${first.output} / ${second.output}`);
        } finally {
          await session.close();
        }
      }
      // What the first call costs beyond an ordinary call: making the sandbox.
      results[label] = { startMs: Math.max(0, median(starts) - median(times)), callMs: median(times) };
    }
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
  return results;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const calls = Number(process.env.SANDBOX_COST_CALLS ?? 10);
  for (const [label, { startMs, callMs }] of Object.entries(await sandboxCost({ calls })))
    console.log(`  ${label.padEnd(24)} start ${startMs.toFixed(0)} ms   python_execute ${callMs.toFixed(0)} ms`);
}
