// How python_execute isolates the code it runs: bubblewrap when it works here, else a separate
// uid per call when the host is root, else the host's own user (said once per process).
import { realpathSync } from 'node:fs';
import { dirname, isAbsolute } from 'node:path';
import { loadChildProcess as childProcess } from '../lazyModule.js';
import type { Isolation } from '../sandbox/localExec.js';
import { noticeOnce, type Probe, probeBwrap, SANDBOX_PATH, underSystemDir } from './sandbox.js';

/**
 * The interpreter's arguments: the code comes on stdin, so no size or byte of it meets the
 * argument limits (E2BIG). Read whole and compiled as `<string>`, it runs as `python3 -c` code
 * would (same `sys.argv`, `sys.path[0]`, `__main__` and traceback lines; the bootstrap's own frame
 * is left out of tracebacks). Not `python3 -u -`: with -u, Python reads a script from stdin one
 * byte per system call (seconds for a few megabytes).
 */
export const PYTHON_ARGS: readonly string[] = [
  '-u',
  '-c',
  'import sys; sys.excepthook = (lambda h: lambda t, v, tb: h(t, v.with_traceback(tb and tb.tb_next), tb and tb.tb_next))(sys.excepthook); del sys; ' +
    "exec(compile(__import__('sys').stdin.buffer.read(), '<string>', 'exec', dont_inherit=True))",
];

/**
 * An interpreter named by absolute path outside the system directories (a pyenv or venv python)
 * gets its installation bound read-only: its prefixes, asked of the interpreter itself.
 */
const prefixCache = new Map<string, Promise<string[]>>();
export function interpreterMounts(python: string): Promise<string[]> {
  if (!isAbsolute(python)) return Promise.resolve([]);
  let cached = prefixCache.get(python);
  if (!cached) {
    cached = new Promise<string[]>((resolve) => {
      const script =
        'import sys, json; print(json.dumps([sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]))';
      childProcess().execFile(
        python,
        ['-I', '-S', '-c', script],
        { env: { PATH: SANDBOX_PATH }, timeout: 30_000 },
        (error, out) => {
          const dirs = new Set<string>();
          try {
            dirs.add(dirname(realpathSync(python)));
            dirs.add(dirname(python));
            if (!error) for (const dir of JSON.parse(out) as string[]) dirs.add(realpathSync(dir));
          } catch {
            // Reported when the call runs it.
          }
          const outside = [...dirs].filter((dir) => !underSystemDir(dir));
          // A directory inside another one is bound with it.
          const top = outside.filter((dir) => !outside.some((other) => other !== dir && dir.startsWith(`${other}/`)));
          resolve(top.flatMap((dir) => ['--ro-bind', dir, dir]));
        },
      );
    });
    prefixCache.set(python, cached);
  }
  return cached;
}

/** Whether bubblewrap runs `python` here: tried once per interpreter and process, then remembered. */
export async function probePythonBwrap(python: string): Promise<Probe> {
  return probeBwrap([python, ...PYTHON_ARGS], 'print("ok")\n', await interpreterMounts(python));
}

/** Says once per process that bubblewrap is not used, why, and what holds instead. */
export function noticePython(reason: string, isolation: Isolation, onNotice?: (message: string) => void): void {
  const instead =
    isolation === 'user'
      ? 'Python runs as a separate unprivileged user per call instead: it cannot read this process or your ' +
        'private files, but it can read world-readable files and reach the network.'
      : 'Python runs as your own user instead: it can read your files and this process (its environment, ' +
        'API keys included) and reach the network.';
  const message = `python_execute: the bubblewrap sandbox is not available (${reason}). ${instead} Install bubblewrap (apt-get install bubblewrap) for the sandbox.`;
  noticeOnce('python_execute', message, onNotice);
}
