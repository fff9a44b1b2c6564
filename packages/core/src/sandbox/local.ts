// The `local` sandbox provider: the run's workspace on this host, commands confined there under
// bubblewrap when it works (or when asked for), else the best the host allows.

import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { err, ok, type Result } from '../result.js';
import type { Sandbox, SandboxProcess, SandboxRequest } from '../shell/sandboxPort.js';
import { confine } from '../tools/workspace.js';
import { noticeOnce, probeBwrap, type SandboxMode } from './bwrap.js';
import { execConfined, type Isolation, withoutBwrap } from './localExec.js';
import { localFiles } from './localFiles.js';
import { type ProcessIsolation, spawnConfined } from './localProcess.js';
import type { LocalSandboxOptions } from './localProvider.js';

/** What commands and long-lived processes run under, chosen for `mode`. */
export interface LocalIsolation {
  readonly exec: Isolation;
  readonly spawn: ProcessIsolation;
}

const NONE = (): LocalIsolation => {
  const exec = withoutBwrap();
  return { exec, spawn: exec === 'user' ? 'user' : 'same-user' };
};

/** Chooses the isolation for `mode`, or says why bubblewrap, asked for, cannot run. */
export async function localIsolation(
  mode: SandboxMode,
  onNotice?: (message: string) => void,
): Promise<Result<LocalIsolation, string>> {
  if (mode === 'none') return ok(NONE());
  const probe = await probeBwrap(['/bin/sh', '-c', 'echo ok']);
  if (probe.ok) return ok({ exec: 'bwrap', spawn: 'bwrap' });
  if (mode === 'bwrap') {
    return err(
      `the bubblewrap sandbox was asked for but cannot run here (${probe.reason}), so nothing was run. ` +
        'Install bubblewrap (apt-get install bubblewrap), or use isolation "none".',
    );
  }
  const none = NONE();
  noticeOnce(
    'sandbox',
    `sandbox: bubblewrap is not available (${probe.reason}). Commands run ` +
      (none.exec === 'user' ? 'as a separate unprivileged user each' : `as your own user (${userInfo().username})`) +
      ', with an environment scrubbed of secrets, and can reach the network' +
      (none.exec === 'user' ? '; long-lived shells as one such user each.' : ' and read your files.') +
      ' Install bubblewrap (apt-get install bubblewrap) for the sandbox.',
    onNotice,
  );
  return ok(none);
}

/** The sandbox whose workspace is `workspace` (a real path), under `isolation`. */
export function localSandbox(
  workspace: string,
  isolation: LocalIsolation,
  onClose: () => Promise<void> = async () => {},
): Sandbox {
  const processes = new Set<SandboxProcess>();
  const running = new AbortController();
  let closed = false;
  const ensureOpen = () => {
    if (closed) throw new Error('the sandbox was removed');
  };
  const cwdOf = async (cwd: string | undefined) => {
    // A command may have removed the workspace itself: the next one gets it back.
    await mkdir(workspace, { recursive: true });
    return cwd === undefined ? workspace : confine(workspace, isAbsolute(cwd) ? cwd : resolve(workspace, cwd));
  };
  return {
    provider: isolation.exec === 'bwrap' ? 'bwrap' : 'local',
    workspace,
    async exec(command, options = {}) {
      ensureOpen();
      const signal = options.signal ? AbortSignal.any([options.signal, running.signal]) : running.signal;
      return execConfined(isolation.exec, workspace, command, {
        ...options,
        cwd: await cwdOf(options.cwd),
        signal,
      });
    },
    async spawn(command, options = {}) {
      ensureOpen();
      const cwd = await cwdOf(options.cwd);
      const started = await spawnConfined(isolation.spawn, workspace, command, {
        cwd,
        ...(options.env ? { env: options.env } : {}),
      });
      processes.add(started);
      started.onExit(() => void processes.delete(started));
      return started;
    },
    ...localFiles(workspace),
    async close() {
      if (closed) return;
      closed = true;
      running.abort(new Error('the sandbox was removed'));
      await Promise.allSettled([...processes].map((p) => p.kill()));
      await onClose();
    },
  };
}

/** A run's sandbox as `options` say: in the run's (or the provider's) workspace, else a temporary one. */
export async function openLocalSandbox(options: LocalSandboxOptions, request: SandboxRequest): Promise<Sandbox> {
  const chosen = await localIsolation(options.isolation ?? 'auto', options.onNotice);
  if (!chosen.isOk()) throw new Error(chosen.error);
  const given = request.workspace ?? options.workspace;
  if (given !== undefined) {
    await mkdir(given, { recursive: true });
    return localSandbox(await realpath(given), chosen.value);
  }
  const temporary = await realpath(await mkdtemp(join(tmpdir(), 'openmanus-sandbox-')));
  return localSandbox(temporary, chosen.value, () => rm(temporary, { recursive: true, force: true }));
}
