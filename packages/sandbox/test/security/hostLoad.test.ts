// Many processes on the host (the model's own leftovers elsewhere, other users' work) must not
// stall this process: what a docker command's end looks at is the container's processes, read
// asynchronously, never every process of the host read at once.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDockerSandboxProvider } from '../../src/dockerProvider.js';
import type { DockerSandbox } from '../../src/dockerSandbox.js';
import { dockerReady, SETUP_TIMEOUT, TEST_IMAGE } from '../docker.js';

/** Sleeping host processes, each with a large environment (reading all of them at once took seconds). */
const PROCESSES = 2000;
const big = 'x'.repeat(120 * 1024);

let sandbox: DockerSandbox;
let crowd: ChildProcess | undefined;

beforeAll(async () => {
  await dockerReady();
  sandbox = await createDockerSandboxProvider({ image: TEST_IMAGE }).create({
    runId: 'crowded-host',
    signal: new AbortController().signal,
  });
  crowd = spawn(
    '/bin/sh',
    ['-c', `i=0; while [ $i -lt ${PROCESSES} ]; do sleep 3600 & i=$((i + 1)); done; echo ready; wait`],
    {
      env: { PATH: process.env.PATH, BIG_ONE: big, BIG_TWO: big },
      detached: true,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  await once(crowd.stdout as NodeJS.ReadableStream, 'data');
}, SETUP_TIMEOUT);

afterAll(async () => {
  if (crowd?.pid) {
    const exited = once(crowd, 'exit');
    process.kill(-crowd.pid, 'SIGKILL');
    await exited;
  }
  await sandbox?.close();
});

describe('a docker command on a host with thousands of processes', () => {
  it('ends without stalling the event loop', async () => {
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    try {
      for (let i = 0; i < 3; i++) expect((await sandbox.exec(['echo', 'quick'])).stdout).toBe('quick\n');
      // A command whose leftovers are looked for and killed, and one that times out.
      expect((await sandbox.exec(['sh', '-c', 'sleep 1000 & echo left'])).stdout).toBe('left\n');
      expect((await sandbox.exec(['sleep', '1000'], { timeoutMs: 500 })).timedOut).toBe(true);
    } finally {
      delay.disable();
    }
    // Generous for a loaded machine: reading every host process's environment took seconds here.
    expect(delay.max / 1e6).toBeLessThan(500);
  }, 120_000);
});
