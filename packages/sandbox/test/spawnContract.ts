// What every provider's long-lived process (`Sandbox.spawn`, the shell bash runs in) does, checked
// the same way for each: OpenManus's tests/sandbox/test_docker_terminal.py (echo, variables, the
// working directory, commands in sequence) plus stderr apart, Ctrl-C that keeps the shell, a kill
// that ends everything the shell started (a background job, a `setsid` daemon), and the exit code.
import { randomInt } from 'node:crypto';
import type { Sandbox, SandboxProcess } from '@openmanus/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** A shell whose commands are answered one at a time: the output up to a line that ends each. */
export function terminal(shell: SandboxProcess) {
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

/** The pids of `pids` still running in the sandbox (a zombie waiting to be reaped counts as ended). */
async function running(sandbox: Sandbox, pids: readonly string[]): Promise<string> {
  const check = 'for p; do s=$(cut -d" " -f3 "/proc/$p/stat" 2>/dev/null) && [ "$s" != Z ] && echo "$p"; done; true';
  return (await sandbox.exec(['/bin/sh', '-c', check, 'sh', ...pids])).stdout.trim();
}

/** Registers the checks against the sandbox `sandbox()` gives (made by the caller's `beforeAll`). */
export function spawnContract(sandbox: () => Sandbox): void {
  describe('a shell in the sandbox (OpenManus test_docker_terminal.py)', () => {
    let shell: SandboxProcess;
    let run: (command: string) => Promise<string>;
    beforeAll(async () => {
      shell = await sandbox().spawn(['bash'], { env: { TEST_VAR: 'test_value' } });
      run = terminal(shell);
    });
    afterAll(() => shell?.kill());

    it('runs a command', async () => {
      expect(await run("echo 'Hello World'")).toBe('Hello World');
    });

    it('has the variables it was given', async () => {
      expect(await run('echo $TEST_VAR')).toBe('test_value');
    });

    it("starts in the sandbox's workspace", async () => {
      expect(await run('pwd')).toBe(sandbox().workspace);
    });

    it('runs commands in sequence, keeping its state between them', async () => {
      expect(await run("echo 'First'")).toBe('First');
      expect(await run("echo 'Second'")).toBe('Second');
      await run('cd /tmp && export KEPT=yes');
      expect(await run('echo "$(pwd) $KEPT"')).toBe('/tmp yes');
    });

    it('interrupts the command in the foreground (Ctrl-C) and keeps the shell', async () => {
      // A duration no other process has, to know when this one runs.
      const seconds = `${randomInt(100, 999)}.${randomInt(1000, 9999)}`;
      const pending = run(`sleep ${seconds}; echo "after: $?"`);
      for (;;) {
        const ps = await sandbox().exec(['ps', '-eo', 'args']);
        if (ps.stdout.includes(`sleep ${seconds}`)) break;
      }
      shell.interrupt();
      expect(await pending).toBe('after: 130');
      expect(await run('echo still here')).toBe('still here');
    });
  });

  describe('a shell: its streams, its end', () => {
    it('gives stderr apart from stdout', async () => {
      const shell = await sandbox().spawn(['bash']);
      const stderr: string[] = [];
      // The two streams come apart: stderr may arrive after the end marker on stdout.
      const errLine = new Promise<void>((resolve) =>
        shell.onStderr((chunk) => {
          stderr.push(Buffer.from(chunk).toString('utf8'));
          if (stderr.join('').includes('\n')) resolve();
        }),
      );
      try {
        expect(await terminal(shell)('echo to-out; echo to-err >&2')).toBe('to-out');
        await errLine;
        expect(stderr.join('')).toBe('to-err\n');
      } finally {
        await shell.kill();
      }
    });

    it('ends the shell and everything it started when killed: a background job, a setsid daemon', async () => {
      const shell = await sandbox().spawn(['bash']);
      const exited = new Promise<number | null>((resolve) => shell.onExit(resolve));
      const pids = (await terminal(shell)('sleep 1234 & job=$!; setsid sleep 1235 & echo "$$ $job $!"')).split(' ');
      expect(pids).toHaveLength(3);
      expect(await running(sandbox(), pids)).toBe(pids.join('\n'));
      await shell.kill();
      expect(await exited).not.toBe(0);
      expect(await running(sandbox(), pids)).toBe('');
    });

    it('reports the exit code of a shell that exits', async () => {
      const shell = await sandbox().spawn(['sh']);
      const exited = new Promise<number | null>((resolve) => shell.onExit(resolve));
      shell.write('exit 7\n');
      expect(await exited).toBe(7);
    });
  });
}
