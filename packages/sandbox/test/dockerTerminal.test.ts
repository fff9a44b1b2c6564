// OpenManus's tests/sandbox/test_docker_terminal.py against a real daemon: a long-lived shell in
// the container (spawn) — echo, environment variables, the working directory, a time limit,
// commands in sequence, and cleanup; plus Ctrl-C that keeps the shell.
import type { SandboxProcess } from '@openmanus/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDockerSandboxProvider, type DockerSandbox } from '../src/index.js';
import { dockerReady, SETUP_TIMEOUT, TEST_IMAGE } from './docker.js';

let sandbox: DockerSandbox;

beforeAll(async () => {
  await dockerReady();
  sandbox = await createDockerSandboxProvider({ image: TEST_IMAGE }).create({
    runId: 'terminal-test',
    signal: new AbortController().signal,
  });
}, SETUP_TIMEOUT);
afterAll(() => sandbox?.close());

/** A shell whose commands are answered one at a time: the output up to a line that ends each. */
function terminal(shell: SandboxProcess) {
  let buffered = '';
  let waiting: (() => void) | undefined;
  shell.onStdout((chunk) => {
    buffered += Buffer.from(chunk).toString('utf8');
    waiting?.();
  });
  let count = 0;
  return async (command: string): Promise<string> => {
    const end = `__end_${++count}__`;
    shell.write(`${command}\necho ${end}\n`);
    while (!buffered.includes(`${end}\n`)) await new Promise<void>((resolve) => (waiting = resolve));
    const [output = '', rest = ''] = buffered.split(`${end}\n`);
    buffered = rest;
    return output.trim();
  };
}

describe('a shell in the sandbox (OpenManus test_docker_terminal.py)', () => {
  let shell: SandboxProcess;
  let run: (command: string) => Promise<string>;
  beforeAll(async () => {
    shell = await sandbox.spawn(['bash'], { env: { TEST_VAR: 'test_value' } });
    run = terminal(shell);
  });
  afterAll(() => shell?.kill());

  it('runs a command', async () => {
    expect(await run("echo 'Hello World'")).toBe('Hello World');
  });

  it('has the variables it was given', async () => {
    expect(await run('echo $TEST_VAR')).toBe('test_value');
  });

  it('starts in /workspace', async () => {
    expect(await run('pwd')).toBe('/workspace');
  });

  it('runs commands in sequence, keeping its state between them', async () => {
    expect(await run("echo 'First'")).toBe('First');
    expect(await run("echo 'Second'")).toBe('Second');
    await run('cd /tmp && export KEPT=yes');
    expect(await run('echo "$(pwd) $KEPT"')).toBe('/tmp yes');
  });

  it('interrupts the command in the foreground (Ctrl-C) and keeps the shell', async () => {
    const pending = run('sleep 60; echo "after: $?"');
    // The sleep is running once ps shows it.
    for (;;) {
      const ps = await sandbox.exec(['ps', '-eo', 'args']);
      if (ps.stdout.includes('sleep 60')) break;
    }
    shell.interrupt();
    expect(await pending).toBe('after: 130');
    expect(await run('echo still here')).toBe('still here');
  });
});

describe('commands with a time limit and cleanup', () => {
  it('stops a command that outlives its time limit (OpenManus raised TimeoutError)', async () => {
    expect(await sandbox.exec(['sleep', '5'], { timeoutMs: 1000 })).toMatchObject({ timedOut: true, exitCode: null });
  });

  it('ends the shell and everything it started when killed', async () => {
    const shell = await sandbox.spawn(['bash']);
    const exited = new Promise<number | null>((resolve) => shell.onExit(resolve));
    const run = terminal(shell);
    await run('sleep 1234 & echo started');
    await shell.kill();
    await exited;
    expect((await sandbox.exec(['ps', '-eo', 'args'])).stdout).not.toMatch(/sleep 1234|bash/);
  });

  it('reports the exit code of a shell that exits', async () => {
    const shell = await sandbox.spawn(['sh']);
    const exited = new Promise<number | null>((resolve) => shell.onExit(resolve));
    shell.write('exit 7\n');
    expect(await exited).toBe(7);
  });
});
