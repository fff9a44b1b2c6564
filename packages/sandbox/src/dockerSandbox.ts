// One run's sandbox: a running container, its commands and files.
import { posix } from 'node:path';
import type { DirectoryEntry, ExecOptions, ExecResult, Sandbox, SandboxProcess } from '@openmanus/core';
import type Docker from 'dockerode';
import { copyIntoContainer, copyOutOfContainer, type Owner, readFromContainer, writeToContainer } from './archive.js';
import { LIST_SCRIPT, MKDIR_SCRIPT, REMOVE_SCRIPT } from './containerScripts.js';
import { type ExecContext, execInContainer, runScript, spawnInContainer } from './dockerExec.js';

const ENTRY_TYPES: Readonly<Record<string, DirectoryEntry['type']>> = { f: 'file', d: 'directory', l: 'symlink' };

/** The codes Node's fs gives what the helper scripts refuse (callers tell a missing path from other failures). */
const CODES: Readonly<Record<string, string>> = { 'not found': 'ENOENT', 'not a directory': 'ENOTDIR' };

/** A helper script's refusal at `target`, as the error Node's fs would throw. */
const refusal = (target: string) => (error: Error) => {
  const code = CODES[error.message];
  throw Object.assign(new Error(`${target}: ${error.message}`), code ? { code } : {});
};

/** A container-backed sandbox, with the container's id for callers that look at Docker directly. */
export interface DockerSandbox extends Sandbox {
  readonly containerId: string;
}

export interface DockerSandboxParts {
  readonly docker: Docker;
  readonly container: Docker.Container;
  readonly owner: Owner;
  readonly workspace: string;
  /** The host pid of the container's first process, when the daemon is local. */
  readonly hostPid?: number;
  /** A command's time limit when the caller gives none. */
  readonly defaultTimeoutMs: number;
  /** Removes the container and gives back what the sandbox borrowed; called once. */
  readonly dispose: () => Promise<void>;
}

export function dockerSandbox(parts: DockerSandboxParts): DockerSandbox {
  const { container, owner, workspace } = parts;
  const context: ExecContext = {
    container,
    user: `${owner.uid}:${owner.gid}`,
    modem: parts.docker.modem,
    ...(parts.hostPid ? { hostPid: parts.hostPid } : {}),
  };
  const resolve = (path: string) => posix.resolve(workspace, path);
  let closing: Promise<void> | undefined;
  const open = () => {
    if (closing) throw new Error('the sandbox is closed');
  };

  const writeFile = async (path: string, data: string | Uint8Array): Promise<void> => {
    open();
    const target = resolve(path);
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    try {
      await writeToContainer(container, target, bytes, owner);
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode !== 404) throw error;
      // The directory is missing: made as the sandbox's user, then the write is tried again.
      await runScript(context, MKDIR_SCRIPT, [posix.dirname(target)]);
      await writeToContainer(container, target, bytes, owner);
    }
  };

  return {
    provider: 'docker',
    workspace,
    containerId: container.id,
    exec: async (command: readonly string[], options: ExecOptions = {}): Promise<ExecResult> => {
      open();
      return execInContainer(context, command, {
        timeoutMs: parts.defaultTimeoutMs,
        ...options,
        cwd: resolve(options.cwd ?? '.'),
      });
    },
    spawn: async (command, options = {}): Promise<SandboxProcess> => {
      open();
      return spawnInContainer(context, command, { ...options, cwd: resolve(options.cwd ?? '.') });
    },
    readFile: async (path) => {
      open();
      return readFromContainer(container, resolve(path));
    },
    writeFile,
    list: async (path) => {
      open();
      const target = resolve(path);
      const out = await runScript(context, LIST_SCRIPT, [target]).catch(refusal(target));
      return out
        .toString('utf8')
        .split('\0')
        .filter(Boolean)
        .map((record) => {
          const [type = '', size = '0', ...name] = record.split(' ');
          return { name: name.join(' '), type: ENTRY_TYPES[type] ?? 'other', size: Number(size) };
        })
        .sort((a, b) => a.name.localeCompare(b.name));
    },
    remove: async (path) => {
      open();
      const target = resolve(path);
      await runScript(context, REMOVE_SCRIPT, [target]).catch(refusal(target));
    },
    copyIn: async (hostPath, sandboxPath) => {
      open();
      const target = resolve(sandboxPath);
      await runScript(context, MKDIR_SCRIPT, [posix.dirname(target)]);
      await copyIntoContainer(container, hostPath, target, owner);
    },
    copyOut: async (sandboxPath, hostPath) => {
      open();
      await copyOutOfContainer(container, resolve(sandboxPath), hostPath);
    },
    close: () => {
      closing ??= parts.dispose();
      return closing;
    },
  };
}
