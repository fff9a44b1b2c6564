// One run's Daytona sandbox behind core's sandbox port: commands through the toolbox's process
// API (the service enforces the time limit), files through its file API, deleted on close.
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import type { Sandbox as RemoteSandbox } from '@daytonaio/sdk';
import type { DirectoryEntry, ExecOptions, ExecResult, PreviewLink, Sandbox, SandboxProcess } from '@openmanus/core';
import { spawnInDaytona } from './daytonaProcess.js';
import { shellLine } from './daytonaShell.js';

export type { PreviewLink };

export interface DaytonaSandbox extends Sandbox {
  readonly provider: 'daytona';
  /** The service's id of the sandbox. */
  readonly id: string;
  /** The public link to what listens on `port` inside the sandbox (SandboxManus: 8080 website, 6080 VNC). */
  previewUrl(port: number): Promise<PreviewLink>;
}

const DEFAULT_MAX_OUTPUT = 1024 * 1024;
/** How long past the command's own limit the service's answer is awaited before giving up on it. */
const ANSWER_GRACE_MS = 5_000;

/** `text` cut to `max` bytes, and how many were cut. */
function capped(text: string, max: number): { text: string; dropped: number } {
  const bytes = Buffer.from(text);
  if (bytes.length <= max) return { text, dropped: 0 };
  return { text: bytes.subarray(0, max).toString(), dropped: bytes.length - max };
}

/** The HTTP status of a failed SDK call (its own errors, or axios's). */
const statusOf = (error: unknown): number | undefined =>
  (error as { statusCode?: number }).statusCode ?? (error as { response?: { status?: number } }).response?.status;

export const describeDaytonaError = (error: unknown): string =>
  error instanceof Error ? error.message : String(error);

/** A 404 of the file API as the file system says it (`ENOENT`), for callers that check for a missing path. */
const missingAsEnoent =
  (path: string) =>
  (error: unknown): never => {
    if (statusOf(error) !== 404) throw error;
    throw Object.assign(new Error(`${path}: no such file or directory`), { code: 'ENOENT', cause: error });
  };

export interface DaytonaSandboxParts {
  readonly remote: RemoteSandbox;
  readonly workspace: string;
  readonly defaultTimeoutMs: number;
  /** Deletes the remote sandbox (once). */
  readonly dispose: () => Promise<void>;
}

export function daytonaSandbox({ remote, workspace, defaultTimeoutMs, dispose }: DaytonaSandboxParts): DaytonaSandbox {
  const resolve = (path: string) => posix.resolve(workspace, path);
  let closed = false;
  const live = () => {
    if (closed) throw new Error(`daytona sandbox ${remote.id} is closed`);
  };

  const exec = async (command: readonly string[], options: ExecOptions = {}): Promise<ExecResult> => {
    live();
    const timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
    let line = shellLine(command);
    // The process API has no stdin: the input goes in a file the command reads, removed afterwards.
    let stdinFile: string | undefined;
    if (options.stdin !== undefined) {
      stdinFile = `/tmp/.openmanus-stdin-${randomBytes(6).toString('hex')}`;
      await remote.fs.uploadFile(Buffer.from(options.stdin), stdinFile);
      line = `(${line}) < ${stdinFile}; status=$?; rm -f ${stdinFile}; exit $status`;
    }
    const ended = (timedOut: boolean, stderr: string): ExecResult => ({
      exitCode: null,
      stdout: '',
      stderr,
      timedOut,
      droppedBytes: 0,
    });
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const gaveUp = new Promise<ExecResult>((settle) => {
      timer = setTimeout(
        () => settle(ended(true, `timed out after ${timeoutMs} ms (the service did not answer)`)),
        timeoutMs + ANSWER_GRACE_MS,
      );
      onAbort = () => settle(ended(false, 'aborted'));
      options.signal?.addEventListener('abort', onAbort, { once: true });
    });
    const answered = remote.process
      .executeCommand(
        line,
        options.cwd ? resolve(options.cwd) : workspace,
        options.env,
        Math.max(1, Math.ceil(timeoutMs / 1000)),
      )
      .then((response): ExecResult => {
        // The service answers stdout and stderr together.
        const out = capped(response.result, options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT);
        return {
          exitCode: response.exitCode,
          stdout: out.text,
          stderr: '',
          timedOut: false,
          droppedBytes: out.dropped,
        };
      })
      .catch((error: unknown): ExecResult => {
        // The toolbox ends a command that outlives its limit and answers 408.
        if (statusOf(error) === 408) return ended(true, `timed out after ${timeoutMs} ms`);
        return ended(false, `daytona sandbox: the command could not run: ${describeDaytonaError(error)}`);
      });
    try {
      if (options.signal?.aborted) return ended(false, 'aborted');
      return await Promise.race([answered, gaveUp]);
    } finally {
      clearTimeout(timer);
      if (onAbort) options.signal?.removeEventListener('abort', onAbort);
    }
  };

  const spawn = async (
    command: readonly string[],
    options: Pick<ExecOptions, 'cwd' | 'env'> = {},
  ): Promise<SandboxProcess> => {
    live();
    return spawnInDaytona(remote, command, {
      cwd: options.cwd ? resolve(options.cwd) : workspace,
      ...(options.env ? { env: options.env } : {}),
    });
  };

  const readFileIn = async (path: string): Promise<Uint8Array> => {
    live();
    const source = resolve(path);
    return new Uint8Array(await remote.fs.downloadFile(source).catch(missingAsEnoent(source)));
  };

  const writeFileIn = async (path: string, data: string | Uint8Array): Promise<void> => {
    live();
    const target = resolve(path);
    await remote.fs.createFolder(posix.dirname(target), '755').catch(() => {});
    await remote.fs.uploadFile(Buffer.from(data), target);
  };

  const list = async (path: string): Promise<readonly DirectoryEntry[]> => {
    live();
    const target = resolve(path);
    const files = await remote.fs.listFiles(target).catch(missingAsEnoent(target));
    return files.map((file) => ({
      name: file.name,
      // Go's file mode string: `d…` a directory, `L…` a symlink.
      type: file.isDir
        ? 'directory'
        : file.mode?.startsWith('L')
          ? 'symlink'
          : file.mode?.startsWith('-')
            ? 'file'
            : 'other',
      size: file.size,
    }));
  };

  const remove = async (path: string): Promise<void> => {
    live();
    const target = resolve(path);
    await remote.fs.deleteFile(target, true).catch(missingAsEnoent(target));
  };

  const copyIn = async (hostPath: string, sandboxPath: string): Promise<void> => {
    if ((await stat(hostPath)).isDirectory()) {
      await remote.fs.createFolder(resolve(sandboxPath), '755');
      for (const entry of await readdir(hostPath))
        await copyIn(join(hostPath, entry), posix.join(resolve(sandboxPath), entry));
    } else {
      await writeFileIn(sandboxPath, await readFile(hostPath));
    }
  };

  const copyOut = async (sandboxPath: string, hostPath: string): Promise<void> => {
    const source = resolve(sandboxPath);
    const details = await remote.fs.getFileDetails(source);
    if (details.isDir) {
      await mkdir(hostPath, { recursive: true });
      for (const entry of await list(source)) await copyOut(posix.join(source, entry.name), join(hostPath, entry.name));
    } else {
      await writeFile(hostPath, await readFileIn(source));
    }
  };

  return {
    provider: 'daytona',
    id: remote.id,
    workspace,
    exec,
    spawn,
    readFile: readFileIn,
    writeFile: writeFileIn,
    list,
    remove,
    copyIn,
    copyOut,
    previewUrl: async (port) => {
      live();
      const link = await remote.getPreviewLink(port);
      return { url: link.url, token: link.token };
    },
    close: async () => {
      closed = true;
      await dispose();
    },
  };
}
