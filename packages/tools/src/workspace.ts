// The workspace a tool works in, and the files in it at paths the model gives (absolute, or
// relative to the workspace). Every file is reached through core's `confineIn` and then opened
// with its `openInside`, which checks again what was actually opened: a symlink swapped in
// between the two, or a dangling one, cannot lead out.
import type { FileHandle } from 'node:fs/promises';
import { lstat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import {
  confineIn,
  hasErrorCode,
  NotRegularFileError,
  OpenManusError,
  type OpenMode,
  openInside,
  WorkspaceError,
} from '@openmanus/core';
import { writeAll } from '@openmanus/core/internal';

/** A preset's workspace: the one given, else `./workspace` (Manus's default), as an absolute path. */
export const workspaceDir = (given: string | undefined): string => resolve(given ?? 'workspace');

/**
 * The directory a tool works in: the one it was created with (already resolved), else the run's
 * workspace, else `./workspace`.
 */
export const workspaceOf = (configured: string | undefined, scope: { readonly workspace?: string }): string =>
  configured ?? workspaceDir(scope.workspace);

/** A file the model named cannot be used as asked; the message says why, for the model. */
export class WorkspaceFileError extends OpenManusError<'WORKSPACE_FILE'> {
  static readonly codes = ['WORKSPACE_FILE'] as const;
  override readonly name = 'WorkspaceFileError';
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super('WORKSPACE_FILE', message, options);
  }
  static override isInstance(value: unknown): value is WorkspaceFileError {
    return hasErrorCode(value, WorkspaceFileError.codes);
  }
}

/** What to tell the model about an error met at `path`, or undefined for one that is not about the path. */
export function refusal(error: unknown, path: string): string | undefined {
  if (error instanceof WorkspaceFileError || error instanceof WorkspaceError) return error.message;
  if (error instanceof NotRegularFileError) return `The path ${path} is not a regular file (it is a ${error.kind}).`;
  switch ((error as NodeJS.ErrnoException | undefined)?.code) {
    case 'ENOENT':
      return `The path ${path} does not exist.`;
    case 'EEXIST':
      return `The path ${path} already exists; it was not replaced.`;
    case 'EISDIR':
      return `The path ${path} is a directory; give a file name.`;
    case 'ENOTDIR':
      return `The path ${path} cannot be used: a directory on its path is a file.`;
    case 'ELOOP':
    case 'EMLINK':
      return `The path ${path} is, or goes through, a symbolic link to something missing or outside the workspace; it is not followed.`;
    case 'ENXIO':
      return `The path ${path} is not a regular file (it is a socket or a device).`;
    case 'EACCES':
    case 'EPERM':
      return `The path ${path} cannot be opened: permission denied.`;
    default:
      return undefined;
  }
}

/** `path` as the model gave it, checked to be in the workspace: its real path and the workspace's. */
async function confineGiven(workspace: string, path: string): Promise<{ root: string; target: string }> {
  if (path.includes('\0')) throw new WorkspaceFileError(`The path ${JSON.stringify(path)} contains a NUL character.`);
  return confineIn(workspace, isAbsolute(path) ? path : resolve(workspace, path));
}

/**
 * Runs `use` on the file at `path`, opened inside the workspace by `open`, and closes it. Any
 * error about the path becomes a WorkspaceFileError; others pass through.
 */
async function withFile<T>(
  workspace: string,
  path: string,
  open: (root: string, target: string) => Promise<FileHandle>,
  use: (handle: FileHandle, target: string) => Promise<T>,
): Promise<T> {
  try {
    const { root, target } = await confineGiven(workspace, path);
    const handle = await open(root, target);
    try {
      return await use(handle, target);
    } finally {
      await handle.close();
    }
  } catch (error) {
    const message = refusal(error, path);
    throw message === undefined ? error : new WorkspaceFileError(message);
  }
}

/** A file refused for its size. */
export const tooLarge = (path: string, size: number, maxBytes: number) =>
  new WorkspaceFileError(`${path} is ${size} bytes; files of at most ${maxBytes} bytes are read.`);

/** The text of a regular file in the workspace, refused when larger than `maxBytes`. */
export function readInside(workspace: string, path: string, maxBytes: number): Promise<string> {
  const tooBig = (size: number) => tooLarge(path, size, maxBytes);
  return withFile(
    workspace,
    path,
    (root, target) => openInside(root, target, 'read', path),
    async (handle) => {
      const stat = await handle.stat();
      if (stat.isDirectory()) throw Object.assign(new Error('directory'), { code: 'EISDIR' });
      if (stat.size > maxBytes) throw tooBig(stat.size);
      const bytes = await handle.readFile();
      // It may have grown since it was measured.
      if (bytes.length > maxBytes) throw tooBig(bytes.length);
      return bytes.toString('utf8');
    },
  );
}

/**
 * How a write treats the file: `new` only makes one (an existing file is refused, never
 * replaced); `replace` and `append` make it when missing.
 */
export type WriteMode = 'new' | 'replace' | 'append';

/** Opens the file to write as `mode` says, making it and its directories when missing. */
async function openForWriting(root: string, target: string, mode: WriteMode, label: string): Promise<FileHandle> {
  try {
    return await openInside(root, target, 'create', label);
  } catch (error) {
    if (mode === 'new' || (error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const existing: OpenMode = mode === 'append' ? 'append' : 'write';
    return openInside(root, target, existing, label);
  }
}

/** Writes `content` to the file at `path` in the workspace as `mode` says; returns the file's real path. */
export function writeInside(workspace: string, path: string, content: string, mode: WriteMode): Promise<string> {
  return withFile(
    workspace,
    path,
    (root, target) => openForWriting(root, target, mode, path),
    async (handle, target) => {
      const bytes = Buffer.from(content, 'utf8');
      // An appending handle writes at the end whatever the position; a replaced file is cut to its new length.
      if (mode === 'replace') await writeAll(handle, bytes);
      else await handle.writeFile(bytes);
      return target;
    },
  );
}

/** Whether anything (a file, a link, a directory) has this name in the workspace. */
export async function taken(workspace: string, path: string): Promise<boolean> {
  const { target } = await confineGiven(workspace, path);
  return lstat(target).then(
    () => true,
    () => false,
  );
}
