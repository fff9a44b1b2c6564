// How python_execute isolates the code it runs: bubblewrap when it works here, else a separate
// uid per call when the host is root, else the host's own user (said once per process).
import { interpreterMounts, noticeOnce, type Probe, probeBwrap } from '../sandbox/bwrap.js';
import type { Isolation } from '../sandbox/localExec.js';

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
