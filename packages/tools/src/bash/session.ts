// One persistent bash process: commands go to its stdin one at a time, framed by markers that carry
// a random nonce of this session, so that each call gets exactly its own output and exit status.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { CommandStream } from './output.js';
import { groupMembers, sendSignal } from './processGroup.js';

/** How to start the shell: plainly, or inside bubblewrap. */
export interface ShellLaunch {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  /**
   * bubblewrap tells the sandbox's first process on fd 3 (`--info-fd 3`): its process group holds
   * the shell. Without it the shell leads a group of its own.
   */
  readonly infoFd: boolean;
  /** Runs after each command (takes setuid bits off what a sandboxed command left in the workspace). */
  readonly afterCommand?: () => Promise<void>;
  /** Runs once the shell is gone: kills what escaped its group, removes its temporary files. */
  readonly cleanup: () => Promise<void>;
}

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
/** How long output may still arrive after the shell exited while a child it left holds the pipes. */
const DRAIN_MS = 300;
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

/** Starts bash as `launch` says and waits until it answers. Rejects with what it said when it cannot start. */
export async function startShell(launch: ShellLaunch, maxChars: number): Promise<ShellSession> {
  const nonce = randomBytes(16).toString('hex');
  let child: ChildProcessWithoutNullStreams;
  try {
    child = spawn(launch.command, [...launch.args], {
      cwd: launch.cwd,
      env: launch.env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe', launch.infoFd ? 'pipe' : 'ignore'],
    }) as ChildProcessWithoutNullStreams;
  } catch (error) {
    await launch.cleanup();
    throw error;
  }
  const stdout = new CommandStream(maxChars, 'stdout');
  const stderr = new CommandStream(maxChars, 'stderr');
  let exit: ShellExit | undefined;
  let startError: Error | undefined;
  // What the shell (or bubblewrap) said before it was ready: why it could not start.
  let early: string | undefined = '';
  const changed = new Set<() => void>();
  const notify = () => {
    for (const listener of [...changed]) listener();
  };
  let streamsEnded = 0;
  child.stdout.on('end', () => {
    streamsEnded++;
    notify();
  });
  child.stderr.on('end', () => {
    streamsEnded++;
    notify();
  });
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    stdout.add(chunk);
    notify();
  });
  child.stderr.on('data', (chunk: string) => {
    if (early !== undefined) early = (early + chunk).slice(-4000);
    stderr.add(chunk);
    notify();
  });
  // A shell that died takes its stdin with it: what we still write is lost, not an error.
  child.stdin.on('error', () => {});
  child.on('error', (error) => {
    const code = (error as NodeJS.ErrnoException).code;
    startError = new Error(
      code === 'ENOENT' ? `${launch.command} is not installed (not found on PATH)` : error.message,
    );
    exit ??= { code: null, signal: null };
    notify();
  });
  const exited = new Promise<void>((resolve) => {
    child.on('exit', (code, sig) => {
      exit = { code, signal: sig };
      notify();
      resolve();
    });
    child.on('error', () => resolve());
  });

  // The process group to interrupt: the shell's own, or the sandbox's (told on fd 3).
  let pgid = launch.infoFd ? undefined : child.pid;
  if (launch.infoFd) {
    const info = child.stdio[3] as Readable | null;
    let text = '';
    info?.setEncoding('utf8');
    info?.on('data', (chunk: string) => {
      text += chunk;
      const pid = /"child-pid"\s*:\s*(\d+)/.exec(text)?.[1];
      if (pid) pgid = Number(pid);
    });
  }

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

  let cleaned: Promise<void> | undefined;
  /** Kills everything: the sandbox's first process takes its whole pid namespace with it. */
  const killAll = async () => {
    if (pgid !== undefined) sendSignal(-pgid, 'SIGKILL');
    // bubblewrap waits for its namespace to be empty; it is killed itself only if it lingers.
    await until(() => exit !== undefined, 2000);
    if (child.pid !== undefined) sendSignal(-child.pid, 'SIGKILL');
    await exited;
    cleaned ??= launch.cleanup();
    await cleaned;
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
    // Processes already there (background jobs of earlier commands) are spared when an interrupt escalates.
    const before = new Set(pgid === undefined ? [] : groupMembers(pgid));
    child.stdin.write(script);

    let timedOut = false;
    let shellKilled = false;
    let interrupted = false;
    const timers: NodeJS.Timeout[] = [];
    const interrupt = () => {
      interrupted = true;
      if (pgid !== undefined) sendSignal(-pgid, 'SIGINT');
      timers.push(
        setTimeout(() => {
          if (pgid !== undefined)
            for (const pid of groupMembers(pgid)) if (!before.has(pid)) sendSignal(pid, 'SIGKILL');
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
      // Output written just before the shell died may still be on its way.
      await until(() => (stdout.ended && stderr.ended) || streamsEnded === 2, DRAIN_MS);
    } finally {
      for (const timer of timers) clearTimeout(timer);
      options.signal.removeEventListener('abort', interrupt);
    }
    await launch.afterCommand?.();
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
  child.stdin.write(`${INIT}\n`);
  const ready = await run(':', { timeoutMs: START_TIMEOUT_MS, signal: new AbortController().signal });
  if (ready.end.kind !== 'exited' || (launch.infoFd && pgid === undefined)) {
    await killAll();
    const reason = startError?.message ?? (early?.trim() || describeEnd(ready.end));
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
