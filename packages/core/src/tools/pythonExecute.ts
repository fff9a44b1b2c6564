import { lazyPromise } from '../lazyModule.js';
import { err, ok } from '../result.js';
import type { SandboxMode } from '../sandbox/bwrap.js';
import { sandboxFor } from '../sandbox/runSandbox.js';
import type { ExecResult, SandboxProvider } from '../shell/sandboxPort.js';
import { defineTool } from './defineTool.js';
import { lazySchema } from './lazySchema.js';
import { PYTHON_ARGS } from './pythonSandbox.js';

// Running on this host (isolation, probing bubblewrap) loads on the first such call.
const onHost = lazyPromise(() => import('./pythonOnHost.js'));

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
  /**
   * Where the code runs when the run has no sandbox of its own: this provider's sandbox for the
   * run (shared with the other tools given it). Without either, the code runs on this host, isolated
   * as `sandbox` says. In a sandbox, `python` is looked up there.
   */
  readonly sandboxProvider?: SandboxProvider;
}

/**
 * Each stream as shown: at most `maxChars` characters, then how much more there was (characters
 * of what came back, plus the bytes the sandbox did not keep: one per character in ASCII text).
 * The sandbox keeps `cap` bytes of each stream; the one it cut is the one that filled them.
 */
function capped(result: ExecResult, cap: number, maxChars: number): [string, string] {
  const cutByExec = (text: string) => (Buffer.byteLength(text) >= cap - 3 ? result.droppedBytes : 0);
  const stdoutDropped = cutByExec(result.stdout);
  const show = (text: string, dropped: number) => {
    const more = Math.max(0, text.length - maxChars) + dropped;
    return more > 0 ? `${text.slice(0, maxChars)}\n…[output truncated: ${more} more characters]` : text;
  };
  return [show(result.stdout, stdoutDropped), show(result.stderr, stdoutDropped > 0 ? 0 : cutByExec(result.stderr))];
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

  return defineTool({
    name: 'python_execute',
    description:
      'Executes Python code in a fresh python3 process whose working directory is the workspace. ' +
      'Only what the code prints (stdout) and errors (stderr, tracebacks) are returned, so use print() to see values. ' +
      'Nothing persists between calls except files written to disk; background processes end with the call.',
    parameters: pythonParameters(defaultTimeout, maxTimeout),
    // The interpreter's own limit sits above the tool's, so the tool reports its timeout itself.
    timeoutMs: (maxTimeout + 10) * 1000,
    execute: async ({ code, timeout }, scope) => {
      if (code.includes('\0')) {
        return err(
          `The code contains a NUL character (at ${nulPosition(code)}); Python source cannot contain NUL bytes, so nothing was run. Write it as '\\x00' inside a string instead.`,
        );
      }
      const seconds = timeout ?? defaultTimeout;
      const exec = {
        stdin: code,
        timeoutMs: seconds * 1000,
        signal: scope.signal,
        // Room for `maxChars` characters of any width; what is cut beyond that is counted in bytes.
        maxOutputBytes: maxChars * 4,
      };
      const sandbox = sandboxFor(scope, options.sandboxProvider);
      const result = sandbox
        ? await (await sandbox()).exec([python, ...PYTHON_ARGS], exec)
        : await (await onHost()).runPythonOnHost(python, options, exec);
      const cancelled = scope.signal.aborted && !result.timedOut;
      const [stdout, stderr] = capped(result, exec.maxOutputBytes, maxChars);
      const chomp = (text: string) => text.replace(/\n+$/, '');
      const parts = [chomp(stdout)];
      if (stderr) parts.push(`[stderr]\n${chomp(stderr)}`);
      if (result.timedOut)
        parts.push(`Execution timed out after ${seconds} seconds; the process and its children were killed.`);
      else if (cancelled) parts.push('Execution was cancelled; the process and its children were killed.');
      else if (result.signal) parts.push(`[exit code none: killed by ${result.signal}]`);
      else if (result.exitCode !== 0) parts.push(`[exit code ${result.exitCode ?? 'none'}]`);
      const text = parts.filter(Boolean).join('\n').trimEnd();
      const success = result.exitCode === 0 && !result.timedOut && !cancelled;
      return success ? ok(text || 'Execution finished with no output.') : err(text);
    },
  });
}
