// Where the shell runs: inside bubblewrap (the sandbox python_execute uses), or as the host's user
// with a scrubbed environment.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import {
  bwrapCommand,
  err,
  hostPath,
  noticeOnce,
  ok,
  probeBwrap,
  type Result,
  reapMarked,
  type SandboxMode,
  sandboxEnv,
  stripSetuid,
} from '@openmanus/core';
import type { ShellLaunch } from './session.js';

export const BASH = '/bin/bash';
const BASH_ARGS = ['--noprofile', '--norc'];
/** Every process of an unsandboxed session carries this variable, so the ones that left its process group are found at the end. */
const SESSION_MARKER = 'OPENMANUS_BASH_SESSION';

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
    `bash: the bubblewrap sandbox is not available (${probe.reason}). Commands run as your own user ` +
      `(${userInfo().username}) instead, with an environment scrubbed of secrets: they can read and write ` +
      'your files outside the workspace, read this process (its environment, API keys included) and reach ' +
      'the network. Install bubblewrap (apt-get install bubblewrap) for the sandbox.',
    onNotice,
  );
  return ok('none');
}

/**
 * How to start one shell session in `workspace`. Under bubblewrap: the workspace writable, the
 * system read-only, no network, nothing of the host's environment; files it leaves in the
 * workspace lose setuid bits (it runs as the host's uid). Unsandboxed: the host's user with a
 * scrubbed environment and a private home.
 */
export async function shellLaunch(isolation: BashIsolation, workspace: string): Promise<ShellLaunch> {
  if (isolation === 'bwrap') {
    const [command, args] = await bwrapCommand([BASH, ...BASH_ARGS], workspace, ['--info-fd', '3']);
    return {
      command,
      args,
      // bubblewrap's own environment: what it needs to be found, nothing the sandbox sees.
      env: { PATH: hostPath() },
      cwd: workspace,
      infoFd: true,
      afterCommand: () => stripSetuid(workspace),
      cleanup: () => stripSetuid(workspace),
    };
  }
  const home = await mkdtemp(join(tmpdir(), 'openmanus-bash-'));
  const token = randomUUID();
  return {
    command: BASH,
    args: BASH_ARGS,
    env: { ...sandboxEnv(hostPath(), home), [SESSION_MARKER]: token },
    cwd: workspace,
    infoFd: false,
    cleanup: async () => {
      await reapMarked(SESSION_MARKER, token);
      await rm(home, { recursive: true, force: true });
    },
  };
}
