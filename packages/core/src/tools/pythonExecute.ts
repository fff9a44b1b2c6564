import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { chown, mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadChildProcess as childProcess } from '../lazyModule.js';
import { err, ok } from '../result.js';
import { defineTool } from './defineTool.js';
import { lazySchema } from './lazySchema.js';
import {
  type Isolation,
  noticePython,
  PYTHON_ARGS,
  probePythonBwrap,
  pythonBwrapCommand,
  unsandboxed,
} from './pythonSandbox.js';
import { bwrapArgs, hostPath, type SandboxMode, sandboxEnv } from './sandbox.js';
import {
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
} from './sandboxUser.js';

/** python_execute's `sandbox` option. */
export type PythonSandbox = SandboxMode;

export interface PythonExecuteOptions {
  readonly workspace: string;
  /**
   * The interpreter (default `python3`), looked up on the PATH the code sees: under bubblewrap only
   * the system directories; as a separate user, only directories other users may read (a pyenv
   * under /root is not one). An absolute path under bubblewrap also mounts that installation.
   */
  readonly python?: string;
  /** Seconds a call may run when the model does not say (default 5, as in OpenManus). */
  readonly defaultTimeoutSec?: number;
  /** The most seconds the model may ask for (default 60). */
  readonly maxTimeoutSec?: number;
  /** Characters kept of stdout and of stderr each; the rest is counted, not stored (default 20000). */
  readonly maxOutputChars?: number;
  /**
   * `auto` (default): bubblewrap when it works here, else what `none` gives, said once per process.
   * `bwrap`: bubblewrap (system read-only, only the workspace and a private /tmp writable, no
   * network, no host /proc or sockets, no home) or a clear refusal when it cannot run.
   * `none`: no bubblewrap; when the host runs as root the code still runs as a separate
   * unprivileged uid per call. Every mode kills every process the call started when it ends.
   */
  readonly sandbox?: PythonSandbox;
  /** Where the once-per-process notice that the sandbox is unavailable goes (default `process.emitWarning`). */
  readonly onNotice?: (message: string) => void;
}

/**
 * The command line for one execution, plain or inside bubblewrap. The code is not on it: it goes
 * to the interpreter's stdin, so no size or byte of it meets the argument limits.
 */
export function pythonCommand(python: string, workspace: string, sandbox: 'none' | 'bwrap'): [string, string[]] {
  if (sandbox === 'none') return [python, [...PYTHON_ARGS]];
  return ['bwrap', bwrapArgs([python, ...PYTHON_ARGS], workspace)];
}

class CappedText {
  private text = '';
  private dropped = 0;
  constructor(private readonly max: number) {}
  add(chunk: string) {
    const room = this.max - this.text.length;
    if (room > 0) this.text += chunk.slice(0, room);
    this.dropped += Math.max(0, chunk.length - Math.max(room, 0));
  }
  toString() {
    return this.dropped > 0 ? `${this.text}\n…[output truncated: ${this.dropped} more characters]` : this.text;
  }
}

interface Execution {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number | null;
  readonly exitSignal: string | null;
  readonly timedOut: boolean;
  readonly cancelled: boolean;
}

interface Launch {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
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
}

/**
 * Runs the code (given on stdin) in its own session and process group, never in our process;
 * when the call ends (exit, timeout, cancel) every process it started is gone before we answer.
 */
function execute(
  launch: Launch,
  code: string,
  workspace: string,
  timeoutSec: number,
  maxChars: number,
  signal: AbortSignal,
): Promise<Execution> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      // Cancelled while it waited for its turn: nothing is started.
      resolve({ stdout: '', stderr: '', exitCode: null, exitSignal: null, timedOut: false, cancelled: true });
      return;
    }
    const stdout = new CappedText(maxChars);
    const stderr = new CappedText(maxChars);
    let timedOut = false;
    let exitCode: number | null = null;
    let exitSignal: string | null = null;
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let drainTimer: NodeJS.Timeout | undefined;
    const done = (reaped: Promise<void>) => {
      void reaped.then(() => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearTimeout(drainTimer);
        signal.removeEventListener('abort', onAbort);
        resolve({
          stdout: stdout.toString(),
          stderr: stderr.toString(),
          exitCode,
          exitSignal,
          timedOut,
          cancelled: signal.aborted && !timedOut,
        });
      });
    };
    let killAll = () => {};
    let killAllNow = () => {};
    const onAbort = () => killAllNow();
    let child: ChildProcessWithoutNullStreams;
    try {
      child = childProcess().spawn(launch.command, [...launch.args], {
        cwd: workspace,
        env: launch.env,
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
        ...(launch.uid !== undefined ? { uid: launch.uid, gid: launch.uid } : {}),
      });
    } catch (error) {
      stderr.add(`could not start ${launch.command}: ${(error as Error).message}`);
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
    if (!stdin || !out || !errOut) throw new Error('python_execute: the interpreter has no pipes');
    // The interpreter may exit before it read everything (or never start): not our error.
    stdin.on('error', () => {});
    stdin.end(code);
    out.setEncoding('utf8');
    errOut.setEncoding('utf8');
    out.on('data', (chunk: string) => stdout.add(chunk));
    errOut.on('data', (chunk: string) => stderr.add(chunk));
    timer = setTimeout(() => {
      timedOut = true;
      killAll();
    }, timeoutSec * 1000);
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) killAllNow();
    child.on('error', (error) => {
      const code = (error as NodeJS.ErrnoException).code;
      const missing = code === 'ENOENT' || code === 'EACCES';
      stderr.add(`could not start ${launch.command}: ${missing ? launch.notFound : error.message}`);
      done(reap());
    });
    let exited = false;
    let closed = false;
    let reaped: Promise<void> | undefined;
    child.on('exit', (code, sig) => {
      exitCode = code;
      exitSignal = sig;
      exited = true;
      // Background processes left by the code die with it; their open pipes must not hold the call.
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

/** Under bubblewrap a signal shows as 128 + its number (ambiguous only with a code's own `exit(129..)`). */
function signalName(run: Execution, isolation: Isolation): string | null {
  if (run.exitSignal) return run.exitSignal;
  if (isolation === 'bwrap' && run.exitCode !== null && run.exitCode > 128 && run.exitCode < 128 + 65) {
    const number = run.exitCode - 128;
    return Object.entries(constants.signals).find(([, n]) => n === number)?.[0] ?? `signal ${number}`;
  }
  return null;
}

/** Where NUL first occurs, said in lines and columns. */
function nulPosition(code: string): string {
  const index = code.indexOf('\0');
  const before = code.slice(0, index).split('\n');
  return `line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}`;
}

/** python_execute's arguments (zod is loaded on the first call, not at import). */
export function pythonParameters(defaultTimeout: number, maxTimeout: number) {
  const code = 'The Python code to execute.';
  const timeout = `Seconds before the process and its children are killed (default ${defaultTimeout}, at most ${maxTimeout}).`;
  return lazySchema(
    {
      type: 'object',
      properties: {
        code: { type: 'string', description: code },
        timeout: { description: timeout, type: 'number', exclusiveMinimum: 0, maximum: maxTimeout },
      },
      required: ['code'],
    },
    (z) =>
      z.object({
        code: z.string().describe(code),
        timeout: z.number().positive().max(maxTimeout).optional().describe(timeout),
      }),
  );
}

/** OpenManus's python_execute, run in a `python3` subprocess with a visible timeout. */
export function createPythonExecute(options: PythonExecuteOptions) {
  const python = options.python ?? 'python3';
  const defaultTimeout = options.defaultTimeoutSec ?? 5;
  const maxTimeout = options.maxTimeoutSec ?? 60;
  const maxChars = options.maxOutputChars ?? 20_000;
  const sandbox = options.sandbox ?? 'auto';

  const isolation = async (): Promise<Isolation> => {
    if (sandbox === 'bwrap') return 'bwrap';
    if (sandbox === 'none') return unsandboxed();
    const probe = await probePythonBwrap(python);
    if (probe.ok) return 'bwrap';
    const instead = unsandboxed();
    noticePython(probe.reason, instead, options.onNotice);
    return instead;
  };

  /** Runs one call under `mode`; everything it started is gone and the workspace is the host's when it resolves. */
  const run = async (mode: Isolation, code: string, seconds: number, signal: AbortSignal, workspace: string) => {
    const host = { PATH: hostPath() };
    if (mode === 'bwrap') {
      // A cancelled call of another mode may still be giving the workspace back from a lent uid:
      // until it has, bubblewrap's user namespace could not even enter it.
      await queueSettled(workspace);
      const [command, args] = await pythonBwrapCommand(python, workspace);
      const launch: Launch = {
        command,
        args,
        // bubblewrap's own environment shows in the sandbox as /proc/1/environ: the PATH only.
        env: host,
        notFound: 'it is not installed (not found on PATH)',
        // Its pid namespace dies with its first process, and that one with bubblewrap.
        reap: reapNamespace,
        reapNow: reapNamespaceNow,
      };
      const result = await execute(launch, code, workspace, seconds, maxChars, signal);
      await stripSetuid(workspace);
      return result;
    }
    const home = await mkdtemp(join(tmpdir(), 'openmanus-python-'));
    try {
      if (mode === 'user') {
        return await serialized(workspace, async () => {
          const lease = leaseUid();
          try {
            await chown(home, lease.uid, lease.uid);
            const giveBack = await lendWorkspace(workspace, lease.uid);
            try {
              const launch: Launch = {
                command: python,
                args: PYTHON_ARGS,
                // The uid has no account: name one, for getpass.getuser() and the like.
                env: { ...sandboxEnv(host.PATH, home), USER: 'sandbox', LOGNAME: 'sandbox' },
                uid: lease.uid,
                notFound: `not found on PATH, or not readable by the sandbox user (uid ${lease.uid}); an interpreter under a private home (e.g. pyenv in /root) cannot run in this mode: use a system python3 or bubblewrap`,
                reap: () => reapUid(lease.uid),
                reapNow: () => reapUidNow(lease.uid),
              };
              return await execute(launch, code, workspace, seconds, maxChars, signal);
            } finally {
              await reapUid(lease.uid);
              await giveBack();
            }
          } finally {
            lease.release();
          }
        });
      }
      const variable = 'OPENMANUS_PYTHON_CALL';
      const token = crypto.randomUUID();
      const launch: Launch = {
        command: python,
        args: PYTHON_ARGS,
        env: { ...sandboxEnv(host.PATH, home), [variable]: token },
        notFound: 'it is not installed (not found on PATH)',
        reap: () => reapMarked(variable, token),
        reapNow: () => reapMarkedNow(variable, token),
      };
      return await execute(launch, code, workspace, seconds, maxChars, signal);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  };

  return defineTool({
    name: 'python_execute',
    description:
      'Executes Python code in a fresh python3 process whose working directory is the workspace. ' +
      'Only what the code prints (stdout) and errors (stderr, tracebacks) are returned, so use print() to see values. ' +
      'Nothing persists between calls except files written to disk; background processes end with the call.',
    parameters: pythonParameters(defaultTimeout, maxTimeout),
    // The interpreter's own limit sits above the tool's, so the tool reports its timeout itself.
    timeoutMs: (maxTimeout + 10) * 1000,
    execute: async ({ code, timeout }, { signal }) => {
      if (code.includes('\0')) {
        return err(
          `The code contains a NUL character (at ${nulPosition(code)}); Python source cannot contain NUL bytes, so nothing was run. Write it as '\\x00' inside a string instead.`,
        );
      }
      await mkdir(options.workspace, { recursive: true });
      const workspace = await realpath(options.workspace);
      const seconds = timeout ?? defaultTimeout;
      const mode = await isolation();
      const result = await run(mode, code, seconds, signal, workspace);
      const chomp = (text: string) => text.replace(/\n+$/, '');
      const parts = [chomp(result.stdout)];
      if (result.stderr) parts.push(`[stderr]\n${chomp(result.stderr)}`);
      const killedBy = signalName(result, mode);
      if (result.timedOut)
        parts.push(`Execution timed out after ${seconds} seconds; the process and its children were killed.`);
      else if (result.cancelled) parts.push('Execution was cancelled; the process and its children were killed.');
      else if (killedBy) parts.push(`[exit code none: killed by ${killedBy}]`);
      else if (result.exitCode !== 0) parts.push(`[exit code ${result.exitCode ?? 'none'}]`);
      const text = parts.filter(Boolean).join('\n').trimEnd();
      const success = result.exitCode === 0 && !result.timedOut && !result.cancelled;
      return success ? ok(text || 'Execution finished with no output.') : err(text);
    },
  });
}
