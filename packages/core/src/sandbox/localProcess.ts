// A long-lived process on this host (a shell), confined: inside bubblewrap, as a uid leased for its
// life (the host is root, no bubblewrap), or as the host's user with a scrubbed environment and a
// private home. Ending it ends everything it started.
import type { ChildProcess } from 'node:child_process';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { loadChildProcess as childProcess } from '../lazyModule.js';
import type { SandboxProcess } from '../shell/sandboxPort.js';
import { bwrapAsHostRoot, bwrapLaunch, hostPath, hostRootRefusal, sandboxEnv } from './bwrap.js';
import { type Ending, endingOfStatus } from './exitStatus.js';
import { groupMembers, sendSignal } from './processGroup.js';
import { leaseUid, reapMarked, reapUid, stripSetuid } from './reaping.js';
import { markerToken, PROCESS_MARKER, sweepSurvivors } from './survivors.js';
import { removeLeftovers } from './tmpLeftovers.js';
import { workspaceLoan } from './workspaceLoan.js';

/** How long output may still arrive after the process exited while a child it left holds the pipes. */
const DRAIN_MS = 300;

/** Where a long-lived process runs: inside bubblewrap, as a leased uid (host root), or as the host's user. */
export type ProcessIsolation = 'bwrap' | 'user' | 'same-user';

/** Listeners that also get what came before they were added (the process may speak before anyone listens). */
class Channel<T> {
  private readonly listeners: Array<(value: T) => void> = [];
  private readonly backlog: T[] = [];
  emit(value: T) {
    if (this.listeners.length === 0) this.backlog.push(value);
    for (const listener of this.listeners) listener(value);
  }
  listen(listener: (value: T) => void) {
    this.listeners.push(listener);
    for (const value of this.backlog.splice(0)) listener(value);
  }
}

interface Launch {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** The uid (and gid) it runs as, when not this process's. */
  readonly uid?: number;
  /** bubblewrap tells the sandbox's first process on fd 3: its process group holds the program. */
  readonly infoFd: boolean;
  /** bubblewrap passes a signal that ended the program on as the exit code 128 + its number. */
  readonly signalsAsCodes: boolean;
  /** Work before input reaches the process (the workspace lent to its uid). */
  readonly beforeInput?: () => Promise<void>;
  readonly settle?: () => Promise<void>;
  readonly cleanup: () => Promise<void>;
  /** bubblewrap's seccomp filter, written to the program's fd 4. */
  readonly seccomp?: Buffer;
}

async function launchFor(
  isolation: ProcessIsolation,
  workspace: string,
  command: readonly string[],
  cwd: string,
  env: Readonly<Record<string, string>>,
): Promise<Launch> {
  if (isolation === 'bwrap') {
    const refusal = hostRootRefusal();
    if (refusal) throw new Error(`bwrap cannot run here: ${refusal}`);
    const bwrap = { env, cwd, seccompFd: 4 };
    const common = {
      // bubblewrap's own environment: what it needs to be found, nothing the sandbox sees.
      env: { PATH: hostPath() },
      infoFd: true,
      signalsAsCodes: true,
    };
    if (!bwrapAsHostRoot()) {
      const launch = await bwrapLaunch(command, workspace, ['--info-fd', '3'], bwrap);
      return {
        ...common,
        command: launch.program,
        args: launch.args,
        ...(launch.seccomp ? { seccomp: launch.seccomp } : {}),
        // It runs as the host's uid: what it leaves in the workspace loses setuid bits.
        settle: () => stripSetuid(workspace),
        cleanup: () => stripSetuid(workspace),
      };
    }
    // Host root: the process runs as a uid leased for its life, the workspace lent to it from
    // each input until another call needs it.
    const lease = leaseUid();
    const loan = workspaceLoan(workspace, lease.uid);
    const launch = await bwrapLaunch(command, workspace, ['--info-fd', '3'], { ...bwrap, uid: lease.uid });
    await loan.lend().catch((error: unknown) => {
      lease.release();
      throw error;
    });
    return {
      ...common,
      command: launch.program,
      args: launch.args,
      ...(launch.seccomp ? { seccomp: launch.seccomp } : {}),
      beforeInput: () => loan.lend(),
      cleanup: async () => {
        await reapUid(lease.uid);
        await loan.giveBack();
        lease.release();
      },
    };
  }
  const [program = '', ...args] = command;
  const home = await mkdtemp(join(tmpdir(), 'openmanus-process-'));
  if (isolation === 'user') {
    // Host root without bubblewrap: never root for the model's code, but a uid leased for the
    // process's life, the workspace lent to it from each input as under bubblewrap.
    const lease = leaseUid();
    const loan = workspaceLoan(workspace, lease.uid);
    try {
      await chown(home, lease.uid, lease.uid);
      await loan.lend();
    } catch (error) {
      lease.release();
      await rm(home, { recursive: true, force: true });
      throw error;
    }
    return {
      command: program,
      args,
      // The uid has no account: name one, for getpass.getuser() and the like.
      env: { ...sandboxEnv(hostPath(), home), USER: 'sandbox', LOGNAME: 'sandbox', ...env },
      uid: lease.uid,
      infoFd: false,
      signalsAsCodes: false,
      beforeInput: () => loan.lend(),
      cleanup: async () => {
        await reapUid(lease.uid);
        await loan.giveBack();
        await removeLeftovers(lease.uid, [workspace]);
        lease.release();
        await rm(home, { recursive: true, force: true });
      },
    };
  }
  const token = markerToken();
  return {
    command: program,
    args,
    env: { ...sandboxEnv(hostPath(), home), ...env, [PROCESS_MARKER]: token },
    infoFd: false,
    signalsAsCodes: false,
    cleanup: async () => {
      await reapMarked(PROCESS_MARKER, token);
      await rm(home, { recursive: true, force: true });
    },
  };
}

/**
 * Starts `command` in `cwd` (inside `workspace`, a real path) under `isolation`. Resolves once
 * the process runs (or has already failed: its stderr then says why and it exits).
 */
export async function spawnConfined(
  isolation: ProcessIsolation,
  workspace: string,
  command: readonly string[],
  options: { readonly cwd?: string; readonly env?: Readonly<Record<string, string>> } = {},
): Promise<SandboxProcess> {
  await sweepSurvivors();
  const launch = await launchFor(isolation, workspace, command, options.cwd ?? workspace, options.env ?? {});
  const stdout = new Channel<Uint8Array>();
  const stderr = new Channel<Uint8Array>();
  const exitListeners: Array<(code: number | null, signal?: string) => void> = [];
  let exitCode: number | null | undefined;
  let exitSignal: string | undefined;
  let child: ChildProcess;
  try {
    child = childProcess().spawn(launch.command, [...launch.args], {
      cwd: options.cwd ?? workspace,
      env: launch.env,
      ...(launch.uid !== undefined ? { uid: launch.uid, gid: launch.uid } : {}),
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe', launch.infoFd ? 'pipe' : 'ignore', launch.seccomp ? 'pipe' : 'ignore'],
    });
    const filter = child.stdio[4] as Writable | null;
    filter?.on('error', () => {});
    filter?.end(launch.seccomp);
  } catch (error) {
    await launch.cleanup();
    throw error;
  }
  let exited!: () => void;
  const exitedOnce = new Promise<void>((resolve) => {
    exited = resolve;
  });
  /** The end, told once the output has arrived (or a child left holding the pipes had its time). */
  const end = (code: number | null) => {
    if (exitCode !== undefined) return;
    const ending: Ending = child.signalCode
      ? { exitCode: null, signal: child.signalCode }
      : launch.signalsAsCodes
        ? endingOfStatus(code)
        : { exitCode: code };
    exitCode = ending.exitCode;
    exitSignal = ending.signal;
    exited();
    for (const listener of exitListeners) listener(exitCode, exitSignal);
  };
  let streams = 0;
  const streamEnded = () => {
    if (++streams === 2 && exitCode === undefined && child.exitCode !== null) end(child.exitCode);
  };
  child.stdout?.on('data', (chunk: Uint8Array) => stdout.emit(chunk));
  child.stderr?.on('data', (chunk: Uint8Array) => stderr.emit(chunk));
  child.stdout?.on('end', streamEnded);
  child.stderr?.on('end', streamEnded);
  // A process that died takes its stdin with it: what we still write is lost, not an error.
  child.stdin?.on('error', () => {});
  child.on('error', (error) => {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? `${launch.command} is not installed (not found on PATH)` : error.message;
    stderr.emit(Buffer.from(`${why}\n`));
    end(null);
  });
  child.on('exit', (code) => {
    if (streams === 2) return end(code);
    setTimeout(() => {
      child.stdout?.destroy();
      child.stderr?.destroy();
      end(code);
    }, DRAIN_MS);
  });

  // The process group to signal: the program's own, or the sandbox's (told on fd 3).
  let pgid = launch.infoFd ? undefined : child.pid;
  if (launch.infoFd) {
    const info = child.stdio[3] as Readable | null;
    await new Promise<void>((resolve) => {
      let text = '';
      info?.setEncoding('utf8');
      info?.on('data', (chunk: string) => {
        text += chunk;
        const pid = /"child-pid"\s*:\s*(\d+)/.exec(text)?.[1];
        if (pid) {
          pgid = Number(pid);
          resolve();
        }
      });
      info?.on('close', () => resolve());
      void exitedOnce.then(resolve);
    });
  }

  // What already ran in the group when the last input came: spared when the foreground is killed.
  let before = new Set<number>();
  let input = Promise.resolve();
  let cleaned: Promise<void> | undefined;
  const kill = async () => {
    if (pgid !== undefined) sendSignal(-pgid, 'SIGKILL');
    // bubblewrap waits for its namespace to be empty; it is killed itself only if it lingers.
    await Promise.race([exitedOnce, new Promise((resolve) => setTimeout(resolve, 2000))]);
    if (child.pid !== undefined) sendSignal(-child.pid, 'SIGKILL');
    await exitedOnce;
    cleaned ??= launch.cleanup();
    await cleaned;
  };

  return {
    write(data) {
      if (pgid !== undefined) before = new Set(groupMembers(pgid));
      const { beforeInput } = launch;
      if (!beforeInput) return void child.stdin?.write(data);
      // In order, each once the work before it is done (a failed loan leaves the input unsent).
      input = input.then(beforeInput).then(
        () => void child.stdin?.write(data),
        () => {},
      );
    },
    onStdout: (listener) => stdout.listen(listener),
    onStderr: (listener) => stderr.listen(listener),
    onExit(listener) {
      if (exitCode !== undefined) listener(exitCode, exitSignal);
      else exitListeners.push(listener);
    },
    interrupt() {
      if (pgid !== undefined) sendSignal(-pgid, 'SIGINT');
    },
    killForeground() {
      if (pgid === undefined) return;
      for (const pid of groupMembers(pgid)) if (!before.has(pid) && pid !== pgid) sendSignal(pid, 'SIGKILL');
    },
    settle: async () => {
      await launch.settle?.();
    },
    kill,
  };
}
