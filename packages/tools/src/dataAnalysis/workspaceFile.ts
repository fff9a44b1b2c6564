// Files the chart tool reads and writes, inside the workspace only: the path is checked with
// core's `confineIn`, and what is then opened is checked again (core's `openInside`), so a symlink
// swapped in between cannot lead out.
import { lstat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { confineIn, openInside, WorkspaceError } from '@openmanus/core';
import { ChartError } from './chartError.js';

/** A path the model gave: absolute, or relative to the workspace (as OpenManus accepted). */
const inWorkspace = (workspace: string, path: string) => (isAbsolute(path) ? path : resolve(workspace, path));

/** The system's error for `path`, said for the model. */
function explained(error: unknown, path: string): Error {
  if (error instanceof WorkspaceError) return new ChartError(error.message);
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return new ChartError(`${path} does not exist.`);
  if (code === 'EISDIR') return new ChartError(`${path} is a directory, not a file.`);
  if (code === 'ELOOP') return new ChartError(`${path} is a symbolic link; name the file itself.`);
  if (code === 'EEXIST') return new ChartError(`${path} already exists; it was not replaced.`);
  return error instanceof Error ? new ChartError(`${path}: ${error.message}`) : new ChartError(String(error));
}

/** The text of a regular file inside the workspace, refused when larger than `maxBytes`. */
export async function readInside(workspace: string, path: string, maxBytes: number): Promise<string> {
  try {
    const { root, target } = await confineIn(workspace, inWorkspace(workspace, path));
    const handle = await openInside(root, target, 'read', path);
    try {
      const stat = await handle.stat();
      if (stat.isDirectory()) throw Object.assign(new Error('directory'), { code: 'EISDIR' });
      const tooBig = () =>
        new ChartError(`${path} is ${stat.size} bytes; files of at most ${maxBytes} bytes are read.`);
      if (stat.size > maxBytes) throw tooBig();
      const bytes = await handle.readFile();
      // It may have grown since it was measured.
      if (bytes.length > maxBytes) throw tooBig();
      return bytes.toString('utf8');
    } finally {
      await handle.close();
    }
  } catch (error) {
    throw error instanceof ChartError ? error : explained(error, path);
  }
}

/** Whether anything (a file, a link, a directory) has this name inside the workspace. */
export async function taken(workspace: string, path: string): Promise<boolean> {
  const { target } = await confineIn(workspace, inWorkspace(workspace, path));
  return lstat(target).then(
    () => true,
    () => false,
  );
}

/** Writes a new file inside the workspace (making its directories); an existing one is never replaced. */
export async function createInside(workspace: string, path: string, content: string): Promise<string> {
  try {
    const { root, target } = await confineIn(workspace, inWorkspace(workspace, path));
    const handle = await openInside(root, target, 'create', path);
    try {
      await handle.writeFile(content);
    } finally {
      await handle.close();
    }
    return target;
  } catch (error) {
    throw error instanceof ChartError ? error : explained(error, path);
  }
}
