// OpenManus's tests/sandbox/test_docker_terminal.py against a real daemon: a long-lived shell in
// the container (spawn) — the checks every provider's shell passes (spawnContract.ts) — and a
// command's time limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDockerSandboxProvider } from '../src/dockerProvider.js';
import type { DockerSandbox } from '../src/dockerSandbox.js';
import { dockerReady, SETUP_TIMEOUT, TEST_IMAGE } from './docker.js';
import { spawnContract } from './spawnContract.js';

let sandbox: DockerSandbox;

beforeAll(async () => {
  await dockerReady();
  sandbox = await createDockerSandboxProvider({ image: TEST_IMAGE }).create({
    runId: 'terminal-test',
    signal: new AbortController().signal,
  });
}, SETUP_TIMEOUT);
afterAll(() => sandbox?.close());

spawnContract(() => sandbox);

describe('commands with a time limit', () => {
  it('stops a command that outlives its time limit (OpenManus raised TimeoutError)', async () => {
    expect(await sandbox.exec(['sleep', '5'], { timeoutMs: 1000 })).toMatchObject({ timedOut: true, exitCode: null });
  });
});
