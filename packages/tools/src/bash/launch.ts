// Where the shell runs: in the run's sandbox, or on this host inside bubblewrap (the sandbox
// python_execute uses), else as a separate unprivileged uid when the host is root, else as the
// host's user, with a scrubbed environment.
import { userInfo } from 'node:os';
import { err, ok, type Result, type Sandbox, type SandboxMode, type SandboxProcess } from '@openmanus/core';
import { canSwitchUser, noticeOnce, probeBwrap, spawnConfined } from '@openmanus/core/internal';

export const BASH = '/bin/bash';
const BASH_ARGS = ['--noprofile', '--norc'];

export type BashIsolation = 'bwrap' | 'none';

/** What the shell runs under for `mode`, or why it may not run at all. */
export async function chooseIsolation(
  mode: SandboxMode,
  onNotice?: (message: string) => void,
): Promise<Result<BashIsolation, string>> {
  if (mode === 'none') return ok('none');
  const probe = await probeBwrap([BASH, ...BASH_ARGS, '-c', 'echo ok']);
  if (probe.ok) return ok('bwrap');
  if (mode === 'bwrap') {
    return err(
      `the bubblewrap sandbox was asked for but cannot run here (${probe.reason}), so nothing was run. ` +
        'Install bubblewrap (apt-get install bubblewrap), or give the tool `sandbox: "none"`.',
    );
  }
  noticeOnce(
    'bash',
    canSwitchUser()
      ? `bash: the bubblewrap sandbox is not available (${probe.reason}). The shell runs as a separate ` +
          'unprivileged user instead, with an environment scrubbed of secrets: it can read world-readable ' +
          'files and reach the network. Install bubblewrap (apt-get install bubblewrap) for the sandbox.'
      : `bash: the bubblewrap sandbox is not available (${probe.reason}). Commands run as your own user ` +
          `(${userInfo().username}) instead, with an environment scrubbed of secrets: they can read and write ` +
          'your files outside the workspace, read this process (its environment, API keys included) and reach ' +
          'the network. Install bubblewrap (apt-get install bubblewrap) for the sandbox.',
    onNotice,
  );
  return ok('none');
}

/**
 * Starts bash in `workspace` on this host: inside bubblewrap; else, the host being root, as a uid
 * leased for the shell's life (never root); else as the host's user; with a scrubbed environment.
 */
export const startHostShell = (isolation: BashIsolation, workspace: string): Promise<SandboxProcess> =>
  spawnConfined(isolation === 'bwrap' ? 'bwrap' : canSwitchUser() ? 'user' : 'same-user', workspace, [
    BASH,
    ...BASH_ARGS,
  ]);

/** Starts bash in a sandbox (the run's), in its workspace. */
export const startSandboxShell = (sandbox: Sandbox): Promise<SandboxProcess> => sandbox.spawn([BASH, ...BASH_ARGS]);
