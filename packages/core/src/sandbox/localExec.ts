// Running one command on this host, confined: under bubblewrap, as a separate uid per call (the
// host is root), or as the host's own user with a scrubbed environment. Whatever the isolation,
// every process the command started is gone, however detached, before the result is given.
import type { ChildProcessByStdio } from 'node:child_process';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { loadChildProcess as childProcess } from '../lazyModule.js';
import type { ExecOptions, ExecResult } from '../shell/sandboxPort.js';
import { bwrapAsHostRoot, bwrapLaunch, hostPath, hostRootRefusal, interpreterMounts, sandboxEnv } from './bwrap.js';
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
import { EXEC_MARKER, markerToken, sweepSurvivors } from './survivors.js';
import { removeLeftovers } from './tmpLeftovers.js';

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
  /** bubblewrap's seccomp filter, written to the program's fd 3. */
  readonly seccomp?: Buffer;
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
    let child: ChildProcessByStdio<Writable, Readable, Readable>;
    try {
      child = childProcess().spawn(launch.command, [...launch.args], {
        cwd: launch.cwd,
        env: launch.env,
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe', launch.seccomp ? 'pipe' : 'ignore'],
        ...(launch.uid !== undefined ? { uid: launch.uid, gid: launch.uid } : {}),
      }) as ChildProcessByStdio<Writable, Readable, Readable>;
      const filter = child.stdio[3] as Writable | null;
      filter?.on('error', () => {});
      filter?.end(launch.seccomp);
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
 * Runs `task` with the workspace lent to a uid of the sandbox range leased for it (one lent
 * workspace at a time); afterwards every process of the uid is gone, what it left in the shared
 * temporary directories too, and the workspace is the host's again.
 */
function asLeasedUid<T>(workspace: string, task: (uid: number) => Promise<T>): Promise<T> {
  return serialized(workspace, async () => {
    const lease = leaseUid();
    try {
      const giveBack = await lendWorkspace(workspace, lease.uid);
      try {
        return await task(lease.uid);
      } finally {
        await reapUid(lease.uid);
        await giveBack();
        await removeLeftovers(lease.uid, [workspace]);
      }
    } finally {
      lease.release();
    }
  });
}

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
  await sweepSurvivors();
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
    const refusal = hostRootRefusal();
    if (refusal)
      return {
        exitCode: null,
        stdout: '',
        stderr: `could not start bwrap: ${refusal}`,
        timedOut: false,
        droppedBytes: 0,
      };
    const mounts = await programMounts(program);
    const inBwrap = async (uid?: number) => {
      const launch = await bwrapLaunch(command, workspace, mounts, {
        env,
        cwd,
        seccompFd: 3,
        ...(uid === undefined ? {} : { uid }),
      });
      return execute(
        {
          command: launch.program,
          args: launch.args,
          // bubblewrap's own environment shows in the sandbox as /proc/1/environ: the PATH only.
          env: { PATH: host },
          cwd,
          notFound: 'it is not installed (not found on PATH)',
          // Its pid namespace dies with its first process, and that one with bubblewrap.
          reap: reapNamespace,
          reapNow: reapNamespaceNow,
          signalsAsCodes: true,
          ...(launch.seccomp ? { seccomp: launch.seccomp } : {}),
        },
        run,
      );
    };
    // As host root the program runs as a per-call uid, the workspace lent to it.
    if (bwrapAsHostRoot()) return asLeasedUid(workspace, inBwrap);
    // A cancelled call of another isolation may still be giving the workspace back from a lent
    // uid: until it has, bubblewrap's user namespace could not even enter it.
    await queueSettled(workspace);
    const result = await inBwrap();
    await stripSetuid(workspace);
    return result;
  }
  const home = await mkdtemp(join(tmpdir(), 'openmanus-exec-'));
  try {
    if (isolation === 'user') {
      return await asLeasedUid(workspace, async (uid) => {
        await chown(home, uid, uid);
        return execute(
          {
            command: program,
            args,
            // The uid has no account: name one, for getpass.getuser() and the like.
            env: { ...sandboxEnv(host, home), USER: 'sandbox', LOGNAME: 'sandbox', ...env },
            cwd,
            uid,
            notFound: `not found on PATH, or not readable by the sandbox user (uid ${uid}); a program under a private home (e.g. pyenv in /root) cannot run in this mode: use a system-wide one, or bubblewrap`,
            reap: () => reapUid(uid),
            reapNow: () => reapUidNow(uid),
            signalsAsCodes: false,
          },
          run,
        );
      });
    }
    const token = markerToken();
    return await execute(
      {
        command: program,
        args,
        env: { ...sandboxEnv(host, home), ...env, [EXEC_MARKER]: token },
        cwd,
        notFound: 'it is not installed (not found on PATH)',
        reap: () => reapMarked(EXEC_MARKER, token),
        reapNow: () => reapMarkedNow(EXEC_MARKER, token),
        signalsAsCodes: false,
      },
      run,
    );
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}
