// Running one command on this host, confined: under bubblewrap, as a separate uid per call (the
// host is root), or as the host's own user with a scrubbed environment. Whatever the isolation,
// every process the command started is gone, however detached, before the result is given.
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { loadChildProcess as childProcess } from '../lazyModule.js';
import type { ExecOptions, ExecResult } from '../shell/sandboxPort.js';
import { bwrapCommand, hostPath, interpreterMounts, sandboxEnv } from './bwrap.js';
import { signalOfStatus } from './exitStatus.js';
import {
  canSwitchUser,
  leaseUid,
  lendWorkspace,
  queueSettled,
  reapMarked,
  reapMarkedNow,
  reapNamespace,
  reapNamespaceNow,
  reapUid,
  reapUidNow,
  serialized,
  stripSetuid,
} from './reaping.js';

/** What a command actually runs under on this host. */
export type Isolation = 'bwrap' | 'user' | 'same-user';

/** What a host without bubblewrap gives: a separate uid per command when it is root, else its own user. */
export const withoutBwrap = (): Isolation => (canSwitchUser() ? 'user' : 'same-user');

export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;

/** One stream's bytes, kept up to `max`; the rest is counted, not stored. */
class CappedBytes {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  dropped = 0;
  constructor(private readonly max: number) {}
  add(chunk: Buffer) {
    const room = this.max - this.kept;
    const taken = room > 0 ? chunk.subarray(0, room) : chunk.subarray(0, 0);
    if (taken.length > 0) this.chunks.push(taken);
    this.kept += taken.length;
    this.dropped += chunk.length - taken.length;
  }
  toString() {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

interface Launch {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  readonly uid?: number;
  /** Said when the program cannot be started. */
  readonly notFound: string;
  /**
   * Kills every process the call started, however detached; resolves when they are gone. Called
   * with the pid of the started program before that program is killed.
   */
  readonly reap: (pid: number | undefined) => Promise<void>;
  /**
   * The same, synchronously: on cancel the run goes on as soon as the abort listeners return, so
   * the processes must be gone by then.
   */
  readonly reapNow: (pid: number | undefined) => void;
  /** Under bubblewrap a signal shows as the exit code 128 + its number. */
  readonly signalsAsCodes: boolean;
}

interface Options {
  readonly stdin: string | Uint8Array;
  readonly timeoutMs: number | undefined;
  readonly signal: AbortSignal | undefined;
  readonly maxOutputBytes: number;
}

/**
 * Runs the program in its own session and process group, never in our process; when it ends
 * (exit, timeout, abort) every process it started is gone before this resolves.
 */
function execute(launch: Launch, options: Options): Promise<ExecResult> {
  return new Promise((resolve) => {
    const stdout = new CappedBytes(options.maxOutputBytes);
    const stderr = new CappedBytes(options.maxOutputBytes);
    const { signal } = options;
    if (signal?.aborted) {
      // Aborted while it waited for its turn: nothing is started.
      resolve({ exitCode: null, stdout: '', stderr: '', timedOut: false, droppedBytes: 0 });
      return;
    }
    let timedOut = false;
    let exitCode: number | null = null;
    let exitSignal: string | undefined;
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let drainTimer: NodeJS.Timeout | undefined;
    const done = (reaped: Promise<void>) => {
      void reaped.then(() => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearTimeout(drainTimer);
        signal?.removeEventListener('abort', onAbort);
        const bySignal = exitSignal ?? (launch.signalsAsCodes ? signalOfStatus(exitCode) : undefined);
        resolve({
          exitCode: bySignal || timedOut ? null : exitCode,
          ...(bySignal ? { signal: bySignal } : {}),
          stdout: stdout.toString(),
          stderr: stderr.toString(),
          timedOut,
          droppedBytes: stdout.dropped + stderr.dropped,
        });
      });
    };
    let killAll = () => {};
    let killAllNow = () => {};
    const onAbort = () => killAllNow();
    const couldNotStart = (message: string) => stderr.add(Buffer.from(`could not start ${launch.command}: ${message}`));
    let child: ChildProcessWithoutNullStreams;
    try {
      child = childProcess().spawn(launch.command, [...launch.args], {
        cwd: launch.cwd,
        env: launch.env,
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
        ...(launch.uid !== undefined ? { uid: launch.uid, gid: launch.uid } : {}),
      });
    } catch (error) {
      couldNotStart((error as Error).message);
      done(launch.reap(undefined));
      return;
    }
    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const reaping: Promise<void>[] = [];
    const reap = () => {
      reaping.push(launch.reap(child.pid));
      return Promise.all(reaping).then(() => {});
    };
    killAll = () => {
      // The reaper looks at what runs under the program before the program itself is killed.
      void reap();
      killGroup();
    };
    killAllNow = () => {
      launch.reapNow(child.pid);
      killAll();
    };
    const { stdin, stdout: out, stderr: errOut } = child;
    // The program may exit before it read everything (or never start): not our error.
    stdin.on('error', () => {});
    stdin.end(options.stdin);
    out.on('data', (chunk: Buffer) => stdout.add(chunk));
    errOut.on('data', (chunk: Buffer) => stderr.add(chunk));
    if (options.timeoutMs !== undefined) {
      timer = setTimeout(() => {
        timedOut = true;
        killAll();
      }, options.timeoutMs);
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) killAllNow();
    child.on('error', (error) => {
      const code = (error as NodeJS.ErrnoException).code;
      couldNotStart(code === 'ENOENT' || code === 'EACCES' ? launch.notFound : error.message);
      done(reap());
    });
    let exited = false;
    let closed = false;
    let reaped: Promise<void> | undefined;
    child.on('exit', (code, sig) => {
      exitCode = code;
      exitSignal = sig ?? undefined;
      exited = true;
      // Background processes left by the command die with it; their open pipes must not hold the call.
      reaped = reap();
      killGroup();
      void reaped.then(() => {
        if (closed) return done(Promise.resolve());
        drainTimer = setTimeout(() => {
          out.destroy();
          errOut.destroy();
          done(Promise.resolve());
        }, 500);
      });
    });
    child.on('close', () => {
      closed = true;
      if (exited && reaped) done(reaped);
    });
  });
}

/**
 * bubblewrap mounts for the program: an interpreter named by absolute path outside the system
 * directories (a pyenv or venv python) gets its installation, read-only.
 */
const programMounts = (program: string): Promise<string[]> =>
  /^python[\d.]*$/.test(basename(program)) ? interpreterMounts(program) : Promise.resolve([]);

/**
 * Runs `command` in `workspace` (a real path) under `isolation`, as the sandbox port's `exec`
 * says. Everything it started is gone, and under a per-call uid the workspace is the host's again,
 * when it resolves.
 */
export async function execConfined(
  isolation: Isolation,
  workspace: string,
  command: readonly string[],
  options: ExecOptions = {},
): Promise<ExecResult> {
  const [program = '', ...args] = command;
  const cwd = options.cwd ?? workspace;
  const run: Options = {
    stdin: options.stdin ?? '',
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    maxOutputBytes: options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
  };
  const env = options.env ?? {};
  const host = hostPath();
  if (isolation === 'bwrap') {
    // A cancelled call of another isolation may still be giving the workspace back from a lent
    // uid: until it has, bubblewrap's user namespace could not even enter it.
    await queueSettled(workspace);
    const [bwrap, bwrapArgs] = await bwrapCommand(command, workspace, await programMounts(program), { env, cwd });
    const result = await execute(
      {
        command: bwrap,
        args: bwrapArgs,
        // bubblewrap's own environment shows in the sandbox as /proc/1/environ: the PATH only.
        env: { PATH: host },
        cwd,
        notFound: 'it is not installed (not found on PATH)',
        // Its pid namespace dies with its first process, and that one with bubblewrap.
        reap: reapNamespace,
        reapNow: reapNamespaceNow,
        signalsAsCodes: true,
      },
      run,
    );
    await stripSetuid(workspace);
    return result;
  }
  const home = await mkdtemp(join(tmpdir(), 'openmanus-exec-'));
  try {
    if (isolation === 'user') {
      return await serialized(workspace, async () => {
        const lease = leaseUid();
        try {
          await chown(home, lease.uid, lease.uid);
          const giveBack = await lendWorkspace(workspace, lease.uid);
          try {
            return await execute(
              {
                command: program,
                args,
                // The uid has no account: name one, for getpass.getuser() and the like.
                env: { ...sandboxEnv(host, home), USER: 'sandbox', LOGNAME: 'sandbox', ...env },
                cwd,
                uid: lease.uid,
                notFound: `not found on PATH, or not readable by the sandbox user (uid ${lease.uid}); a program under a private home (e.g. pyenv in /root) cannot run in this mode: use a system-wide one, or bubblewrap`,
                reap: () => reapUid(lease.uid),
                reapNow: () => reapUidNow(lease.uid),
                signalsAsCodes: false,
              },
              run,
            );
          } finally {
            await reapUid(lease.uid);
            await giveBack();
          }
        } finally {
          lease.release();
        }
      });
    }
    const variable = 'OPENMANUS_EXEC_CALL';
    const token = crypto.randomUUID();
    return await execute(
      {
        command: program,
        args,
        env: { ...sandboxEnv(host, home), ...env, [variable]: token },
        cwd,
        notFound: 'it is not installed (not found on PATH)',
        reap: () => reapMarked(variable, token),
        reapNow: () => reapMarkedNow(variable, token),
        signalsAsCodes: false,
      },
      run,
    );
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}
