// python_execute on this host, with no sandbox provider: isolated as its `sandbox` option says.
import { mkdir, realpath } from 'node:fs/promises';
import { execConfined, type Isolation, withoutBwrap } from '../sandbox/localExec.js';
import type { ExecOptions, ExecResult } from '../shell/sandboxPort.js';
import type { PythonExecuteOptions } from './pythonExecute.js';
import { noticePython, PYTHON_ARGS, probePythonBwrap } from './pythonSandbox.js';

/** bubblewrap when asked for or when it works here, else the best the host allows (said once). */
async function isolationFor(python: string, options: PythonExecuteOptions): Promise<Isolation> {
  const mode = options.sandbox ?? 'auto';
  if (mode === 'bwrap') return 'bwrap';
  if (mode === 'none') return withoutBwrap();
  const probe = await probePythonBwrap(python);
  if (probe.ok) return 'bwrap';
  const instead = withoutBwrap();
  noticePython(probe.reason, instead, options.onNotice);
  return instead;
}

/** Runs the code (on stdin) in the workspace, made first if it is missing. */
export async function runPythonOnHost(
  python: string,
  options: PythonExecuteOptions,
  exec: ExecOptions,
): Promise<ExecResult> {
  await mkdir(options.workspace, { recursive: true });
  const workspace = await realpath(options.workspace);
  return execConfined(await isolationFor(python, options), workspace, [python, ...PYTHON_ARGS], exec);
}
