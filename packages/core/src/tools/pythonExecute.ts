import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { z } from 'zod';
import { err, ok } from '../result.js';
import { defineTool } from './defineTool.js';

export interface PythonExecuteOptions {
  readonly workspace: string;
  /** The interpreter to run (default `python3`). */
  readonly python?: string;
  /** Seconds a call may run when the model does not say (default 5, as in OpenManus). */
  readonly defaultTimeoutSec?: number;
  /** The most seconds the model may ask for (default 60). */
  readonly maxTimeoutSec?: number;
  /** Characters kept of stdout and of stderr each; the rest is counted, not stored (default 20000). */
  readonly maxOutputChars?: number;
  /**
   * `bwrap`: run under bubblewrap with no network, a read-only system and only the workspace
   * (and a private /tmp) writable. Off (`none`) by default; needs the `bwrap` binary.
   */
  readonly sandbox?: 'none' | 'bwrap';
}

/** The command line for one execution, plain or inside bubblewrap. */
export function pythonCommand(
  python: string,
  code: string,
  workspace: string,
  sandbox: 'none' | 'bwrap',
): [string, string[]] {
  const args = ['-u', '-c', code];
  if (sandbox === 'none') return [python, args];
  return [
    'bwrap',
    [
      ...['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'],
      ...['--bind', workspace, workspace, '--chdir', workspace],
      ...['--unshare-net', '--unshare-pid', '--unshare-ipc', '--die-with-parent'],
      python,
      ...args,
    ],
  ];
}

// The child gets a minimal environment: no API keys or other secrets of the host process.
const childEnv = (workspace: string): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
  LANG: process.env.LANG ?? 'C.UTF-8',
  HOME: workspace,
  PYTHONIOENCODING: 'utf-8',
  PYTHONUNBUFFERED: '1',
  PYTHONDONTWRITEBYTECODE: '1',
  MPLBACKEND: 'Agg',
});

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
  readonly timedOut: boolean;
  readonly cancelled: boolean;
}

/** Runs code in its own process group so the whole tree can be killed; never in our process. */
function execute(
  [command, args]: [string, string[]],
  workspace: string,
  timeoutSec: number,
  maxChars: number,
  signal: AbortSignal,
): Promise<Execution> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: workspace,
      env: childEnv(workspace),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stdout = new CappedText(maxChars);
    const stderr = new CappedText(maxChars);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => stdout.add(chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => stderr.add(chunk));
    let timedOut = false;
    let exitCode: number | null = null;
    let settled = false;
    const killTree = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(drainTimer);
      signal.removeEventListener('abort', onAbort);
      resolve({
        stdout: stdout.toString(),
        stderr: stderr.toString(),
        exitCode,
        timedOut,
        cancelled: signal.aborted && !timedOut,
      });
    };
    const onAbort = () => killTree();
    const timer = setTimeout(() => {
      timedOut = true;
      killTree();
    }, timeoutSec * 1000);
    let drainTimer: NodeJS.Timeout | undefined;
    signal.addEventListener('abort', onAbort, { once: true });
    child.on('error', (error) => {
      const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
      stderr.add(`could not start ${command}: ${missing ? 'it is not installed (not found on PATH)' : error.message}`);
      finish();
    });
    child.on('exit', (code) => {
      exitCode = code;
      // Background children left by the code die with it; their open pipes must not hold the call.
      killTree();
      drainTimer = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        finish();
      }, 500);
    });
    child.on('close', finish);
  });
}

/** OpenManus's python_execute, run in a `python3` subprocess with a visible timeout. */
export function createPythonExecute(options: PythonExecuteOptions) {
  const python = options.python ?? 'python3';
  const defaultTimeout = options.defaultTimeoutSec ?? 5;
  const maxTimeout = options.maxTimeoutSec ?? 60;
  const maxChars = options.maxOutputChars ?? 20_000;
  return defineTool({
    name: 'python_execute',
    description:
      'Executes Python code in a fresh python3 process whose working directory is the workspace. ' +
      'Only what the code prints (stdout) and errors (stderr, tracebacks) are returned, so use print() to see values. ' +
      'Nothing persists between calls except files written to disk.',
    parameters: z.object({
      code: z.string().describe('The Python code to execute.'),
      timeout: z
        .number()
        .positive()
        .max(maxTimeout)
        .optional()
        .describe(
          `Seconds before the process and its children are killed (default ${defaultTimeout}, at most ${maxTimeout}).`,
        ),
    }),
    // The interpreter's own limit sits above the tool's, so the tool reports its timeout itself.
    timeoutMs: (maxTimeout + 10) * 1000,
    execute: async ({ code, timeout }, { signal }) => {
      await mkdir(options.workspace, { recursive: true });
      const seconds = timeout ?? defaultTimeout;
      const command = pythonCommand(python, code, options.workspace, options.sandbox ?? 'none');
      const run = await execute(command, options.workspace, seconds, maxChars, signal);
      const chomp = (text: string) => text.replace(/\n+$/, '');
      const parts = [chomp(run.stdout)];
      if (run.stderr) parts.push(`[stderr]\n${chomp(run.stderr)}`);
      if (run.timedOut)
        parts.push(`Execution timed out after ${seconds} seconds; the process and its children were killed.`);
      else if (run.cancelled) parts.push('Execution was cancelled; the process and its children were killed.');
      else if (run.exitCode !== 0) parts.push(`[exit code ${run.exitCode ?? 'none'}]`);
      const text = parts.filter(Boolean).join('\n').trimEnd();
      const success = run.exitCode === 0 && !run.timedOut && !run.cancelled;
      return success ? ok(text || 'Execution finished with no output.') : err(text);
    },
  });
}
