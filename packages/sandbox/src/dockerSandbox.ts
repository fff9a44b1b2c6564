// One run's sandbox: a running container, its commands and files.
import { posix } from 'node:path';
import type { ExecOptions, ExecResult, Sandbox, SandboxProcess } from '@openmanus/core';
import type Docker from 'dockerode';
import { containerFiles } from './containerFiles.js';
import { restartable } from './containerRestart.js';
import { type ExecContext, execInContainer, spawnInContainer } from './dockerExec.js';
import type { HostView } from './hostProcesses.js';

/** Who the container's processes run as. */
export interface Owner {
  readonly uid: number;
  readonly gid: number;
}

/** A container-backed sandbox, with the container's id for callers that look at Docker directly. */
export interface DockerSandbox extends Sandbox {
  readonly containerId: string;
}

export interface DockerSandboxParts {
  readonly docker: Docker;
  readonly container: Docker.Container;
  readonly owner: Owner;
  readonly workspace: string;
  /** Where the host sees the container's processes, when the daemon is local. */
  readonly hostView?: HostView;
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
    ...restartable(container, parts.hostView),
  };
  const files = containerFiles(context, workspace);
  const resolve = (path: string) => posix.resolve(workspace, path);
  let closing: Promise<void> | undefined;
  const open = () => {
    if (closing) throw new Error('the sandbox is closed');
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
    readFile: async (path, options) => {
      open();
      return files.readFile(resolve(path), options?.maxBytes);
    },
    writeFile: async (path, data) => {
      open();
      await files.writeFile(resolve(path), typeof data === 'string' ? Buffer.from(data) : data);
    },
    list: async (path) => {
      open();
      return files.list(resolve(path));
    },
    remove: async (path) => {
      open();
      await files.remove(resolve(path));
    },
    copyIn: async (hostPath, sandboxPath) => {
      open();
      await files.copyIn(hostPath, resolve(sandboxPath));
    },
    copyOut: async (sandboxPath, hostPath) => {
      open();
      await files.copyOut(resolve(sandboxPath), hostPath);
    },
    close: () => {
      closing ??= parts.dispose();
      return closing;
    },
  };
}
