// The sandbox port's contract for how a command ended, checked the same way on every provider
// that runs here: the host without and with bubblewrap, and a container on the real daemon. An
// exit is its code; a signal is `exitCode: null` with the signal's name; a timeout is `timedOut`
// (the command killed with SIGKILL); output past the cap is counted, not kept. And a file
// operation fails with Node's code, which tools tell a missing path by.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalSandboxProvider, type Sandbox, type SandboxProvider } from '@openmanus/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDockerSandboxProvider } from '../src/dockerProvider.js';
import { dockerReady, SETUP_TIMEOUT, TEST_IMAGE } from './docker.js';

interface Subject {
  readonly name: string;
  readonly provider: () => SandboxProvider;
  readonly ready?: () => Promise<unknown>;
}

const subjects: Subject[] = [
  { name: 'local without bubblewrap', provider: () => createLocalSandboxProvider({ isolation: 'none' }) },
  // Asked for explicitly: a host where bubblewrap cannot run fails here, it is not skipped.
  { name: 'local with bubblewrap', provider: () => createLocalSandboxProvider({ isolation: 'bwrap' }) },
  {
    name: 'docker',
    provider: () => createDockerSandboxProvider({ image: TEST_IMAGE, memoryLimit: '256m' }),
    ready: dockerReady,
  },
];

/** How a long-lived shell ended after it was given `input`. */
async function shellEnding(sandbox: Sandbox, input: string): Promise<[number | null, string | undefined]> {
  const shell = await sandbox.spawn(['/bin/sh']);
  const ended = new Promise<[number | null, string | undefined]>((resolve) =>
    shell.onExit((code, signal) => resolve([code, signal])),
  );
  shell.write(input);
  return ended;
}

describe.each(subjects)('the sandbox port on $name', ({ provider, ready }) => {
  let sandbox: Sandbox;
  let workspace: string;
  beforeAll(async () => {
    await ready?.();
    workspace = await mkdtemp(join(tmpdir(), 'exec-contract-'));
    sandbox = await provider().create({ runId: 'contract', workspace, signal: new AbortController().signal });
  }, SETUP_TIMEOUT);
  afterAll(async () => {
    await sandbox?.close();
    await rm(workspace, { recursive: true, force: true });
  });

  it('reports a clean exit as exit code 0', async () => {
    expect(await sandbox.exec(['/bin/sh', '-c', 'exit 0'])).toEqual({
      exitCode: 0,
      stdout: '',
      stderr: '',
      timedOut: false,
      droppedBytes: 0,
    });
  });

  it('reports a failing exit as its code, with both streams', async () => {
    expect(await sandbox.exec(['/bin/sh', '-c', 'echo out; echo err >&2; exit 3'])).toEqual({
      exitCode: 3,
      stdout: 'out\n',
      stderr: 'err\n',
      timedOut: false,
      droppedBytes: 0,
    });
  });

  it('reports a command killed by SIGKILL as no exit code and the signal', async () => {
    expect(await sandbox.exec(['/bin/sh', '-c', 'echo before; kill -9 $$; echo after'])).toEqual({
      exitCode: null,
      signal: 'SIGKILL',
      stdout: 'before\n',
      stderr: '',
      timedOut: false,
      droppedBytes: 0,
    });
  });

  it('reports a program that SIGTERMs itself the same way', async () => {
    const code = 'import os, signal\nprint("bye", flush=True)\nos.kill(os.getpid(), signal.SIGTERM)';
    expect(await sandbox.exec(['python3', '-c', code])).toEqual({
      exitCode: null,
      signal: 'SIGTERM',
      stdout: 'bye\n',
      stderr: '',
      timedOut: false,
      droppedBytes: 0,
    });
  });

  it('says it timed out, keeps what came before, and has killed it (SIGKILL)', async () => {
    const started = Date.now();
    const result = await sandbox.exec(['/bin/sh', '-c', 'echo started; sleep 30'], { timeoutMs: 500 });
    expect(result).toEqual({
      exitCode: null,
      signal: 'SIGKILL',
      stdout: 'started\n',
      stderr: '',
      timedOut: true,
      droppedBytes: 0,
    });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('keeps at most maxOutputBytes of each stream and counts what it dropped', async () => {
    const code = 'import sys\nsys.stdout.write("x" * 100000)\nsys.stderr.write("y" * 10)';
    expect(await sandbox.exec(['python3', '-c', code], { maxOutputBytes: 1000 })).toEqual({
      exitCode: 0,
      stdout: 'x'.repeat(1000),
      stderr: 'y'.repeat(10),
      timedOut: false,
      droppedBytes: 99_000,
    });
  });

  it('tells a long-lived process’s exit code, or the signal that ended it', async () => {
    expect(await shellEnding(sandbox, 'exit 3\n')).toEqual([3, undefined]);
    expect(await shellEnding(sandbox, 'kill -9 $$\n')).toEqual([null, 'SIGKILL']);
  });

  it("fails file operations with Node's codes: a missing path, a file taken for a directory, a directory read", async () => {
    await sandbox.writeFile('plain.txt', 'x');
    await sandbox.writeFile('dir/inner.txt', 'y');
    await expect(sandbox.list('missing')).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(sandbox.list('plain.txt')).rejects.toMatchObject({ code: 'ENOTDIR' });
    await expect(sandbox.readFile('missing.txt')).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(sandbox.readFile('dir')).rejects.toMatchObject({ code: 'EISDIR' });
    await expect(sandbox.remove('missing.txt')).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
