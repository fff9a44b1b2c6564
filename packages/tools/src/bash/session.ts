// One persistent bash process: commands go to its stdin one at a time, framed by markers that carry
// a random nonce of this session, so that each call gets exactly its own output and exit status.
// The process is a sandbox's (the run's, or the host's under bubblewrap): it only talks through
// the sandbox port.
import { randomBytes } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import type { SandboxProcess } from '@openmanus/core';
import { CommandStream } from './output.js';

export interface ShellExit {
  readonly code: number | null;
  readonly signal: string | null;
}

/** How a command ended. */
export type CommandEnd =
  | { readonly kind: 'exited'; readonly exitCode: number }
  /** It ran out of time: the shell and everything in it were killed. */
  | { readonly kind: 'timedOut' }
  /** Interrupted on request; `shellKilled` when the shell did not come back and was killed too. */
  | { readonly kind: 'interrupted'; readonly shellKilled: boolean }
  /** The shell itself ended during the command (`exit`, a signal). */
  | { readonly kind: 'shellExited'; readonly exit: ShellExit }
  /** The shell had ended before the command began: nothing of it ran. */
  | { readonly kind: 'notStarted'; readonly exit: ShellExit };

export interface CommandResult {
  readonly stdout: string;
  readonly stderr: string;
  readonly end: CommandEnd;
}

export interface CommandOptions {
  readonly timeoutMs: number;
  /** Aborting interrupts the command (SIGINT, then SIGKILL); the shell survives if it can. */
  readonly signal: AbortSignal;
}

export interface ShellSession {
  /** Set once the shell has ended, by itself or closed. */
  readonly exit: ShellExit | undefined;
  /** Runs one command; calls must not overlap. */
  run(command: string, options: CommandOptions): Promise<CommandResult>;
  /** Kills the shell and every process it started; resolves when they are gone. */
  close(): Promise<void>;
}

/** How long an interrupted command gets after SIGINT, and then after SIGKILL, before the shell is killed too. */
const INTERRUPT_GRACE_MS = 1000;
const START_TIMEOUT_MS = 30_000;

// Run once at start. On SIGINT the trap arms a DEBUG trap that makes every further command of the
// current command line return (extdebug: status 2 from a DEBUG trap returns from the function or
// sourced file being run), so the whole line stops as at a prompt, and the shell lives on. A
// trap with a handler is reset to the default in the programs the shell starts: they get SIGINT.
const INIT = [
  'shopt -s extdebug',
  'set -T',
  `trap 'trap "[[ \\\${#BASH_SOURCE[@]} -eq 0 ]] || return 2" DEBUG' INT`,
].join('\n');

/** Takes over `shell` (bash just started) and waits until it answers. Rejects with what it said when it cannot start. */
export async function startShell(shell: SandboxProcess, maxChars: number): Promise<ShellSession> {
  const nonce = randomBytes(16).toString('hex');
  const stdout = new CommandStream(maxChars, 'stdout');
  const stderr = new CommandStream(maxChars, 'stderr');
  let exit: ShellExit | undefined;
  // What the shell (or its sandbox) said before it was ready: why it could not start.
  let early: string | undefined = '';
  const changed = new Set<() => void>();
  const notify = () => {
    for (const listener of [...changed]) listener();
  };
  const outText = new StringDecoder('utf8');
  const errText = new StringDecoder('utf8');
  shell.onStdout((chunk) => {
    stdout.add(outText.write(Buffer.from(chunk)));
    notify();
  });
  shell.onStderr((chunk) => {
    const text = errText.write(Buffer.from(chunk));
    if (early !== undefined) early = (early + text).slice(-4000);
    stderr.add(text);
    notify();
  });
  // Told once its output has arrived.
  const exited = new Promise<void>((resolve) => {
    shell.onExit((code, signal) => {
      exit = { code, signal: signal ?? null };
      notify();
      resolve();
    });
  });

  /** Waits until `done` says yes (checked whenever output or the process changes), or `ms` pass. */
  const until = (done: () => boolean, ms: number) =>
    new Promise<void>((resolve) => {
      if (done()) return resolve();
      const listener = () => {
        if (!done()) return;
        clearTimeout(timer);
        changed.delete(listener);
        resolve();
      };
      const timer = setTimeout(() => {
        changed.delete(listener);
        resolve();
      }, ms);
      changed.add(listener);
    });

  let killed: Promise<void> | undefined;
  /** Kills the shell and everything it started. */
  const killAll = async () => {
    killed ??= shell.kill();
    await killed;
    await exited;
  };

  let seq = 0;
  const run = async (command: string, options: CommandOptions): Promise<CommandResult> => {
    if (exit) return { stdout: '', stderr: '', end: { kind: 'notStarted', exit } };
    const n = ++seq;
    const start = `__OM_${nonce}_${n}_START__`;
    const end = `__OM_${nonce}_${n}_END_`;
    stdout.begin(`${start}\n`, end);
    stderr.begin(`${start}\n`, end);
    const delimiter = `__OM_${nonce}_EOF`;
    // The command is read from its own here-document, so a syntax error stays inside it; sourced
    // (not run in a function) so that `declare` makes globals and `$@` is the shell's own. It gets
    // no stdin: a program waiting for input would otherwise eat the next command.
    const script = [
      `trap - DEBUG; printf '%s\\n' '${start}'; printf '%s\\n' '${start}' >&2; . /dev/fd/3 3<<'${delimiter}' </dev/null`,
      command,
      delimiter,
      `printf '%s%d__\\n' '${end}' "$?"; trap - DEBUG; printf '%s__\\n' '${end}' >&2`,
      '',
    ].join('\n');
    shell.write(script);

    let timedOut = false;
    let shellKilled = false;
    let interrupted = false;
    const timers: NodeJS.Timeout[] = [];
    const interrupt = () => {
      interrupted = true;
      shell.interrupt();
      timers.push(
        setTimeout(() => {
          // What this command started goes; background jobs of earlier commands are spared.
          shell.killForeground?.();
          timers.push(
            setTimeout(() => {
              shellKilled = true;
              void killAll();
            }, INTERRUPT_GRACE_MS),
          );
        }, INTERRUPT_GRACE_MS),
      );
    };
    timers.push(
      setTimeout(() => {
        timedOut = true;
        void killAll();
      }, options.timeoutMs),
    );
    if (options.signal.aborted) interrupt();
    else options.signal.addEventListener('abort', interrupt, { once: true });
    try {
      await until(() => (stdout.ended && stderr.ended) || exit !== undefined, 2 ** 31 - 1);
    } finally {
      for (const timer of timers) clearTimeout(timer);
      options.signal.removeEventListener('abort', interrupt);
    }
    await shell.settle?.();
    const output = { stdout: stdout.output, stderr: stderr.output };
    if (timedOut) return { ...output, end: { kind: 'timedOut' } };
    if (interrupted) return { ...output, end: { kind: 'interrupted', shellKilled: shellKilled || exit !== undefined } };
    if (stdout.status !== undefined) return { ...output, end: { kind: 'exited', exitCode: stdout.status } };
    // The shell ended: everything it left behind goes with it.
    await killAll();
    const ended = exit ?? { code: null, signal: null };
    // Its start marker is the first thing the command line does: without it, nothing of the command ran.
    return stdout.started
      ? { ...output, end: { kind: 'shellExited', exit: ended } }
      : { stdout: '', stderr: '', end: { kind: 'notStarted', exit: ended } };
  };

  // The first command proves the shell (and the sandbox around it) runs.
  shell.write(`${INIT}\n`);
  const ready = await run(':', { timeoutMs: START_TIMEOUT_MS, signal: new AbortController().signal });
  if (ready.end.kind !== 'exited') {
    await killAll();
    const reason = early?.trim() || describeEnd(ready.end);
    throw new Error(`bash could not start: ${reason}`);
  }
  early = undefined;

  return {
    get exit() {
      return exit;
    },
    run,
    close: killAll,
  };
}

function describeEnd(end: CommandEnd): string {
  if (end.kind === 'timedOut') return 'no answer in time';
  if (end.kind === 'shellExited') {
    return end.exit.signal ? `it was killed by ${end.exit.signal}` : `it exited with code ${end.exit.code}`;
  }
  return end.kind;
}
