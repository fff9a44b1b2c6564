import type { FileHandle } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import {
  confineIn,
  defineTool,
  err,
  NotRegularFileError,
  ok,
  openInside,
  WorkspaceError,
  writeAll,
} from '@openmanus/core';
import { z } from 'zod';
import { workspaceOf } from './workspace.js';

export interface FileSaverOptions {
  /** Where files are saved (default: the run's workspace, else `./workspace`). */
  readonly workspace?: string;
}

/** What to tell the model when the path cannot be written, or undefined for an unexpected error. */
function refusal(error: unknown, path: string): string | undefined {
  if (error instanceof WorkspaceError) return error.message;
  if (error instanceof NotRegularFileError) return `The path ${path} is not a regular file (it is a ${error.kind}).`;
  switch ((error as NodeJS.ErrnoException | undefined)?.code) {
    case 'EISDIR':
      return `The path ${path} is a directory; give a file name.`;
    case 'ENOTDIR':
      return `Cannot save to ${path}: a directory on its path is a file.`;
    case 'ELOOP':
    case 'EMLINK':
      return `The path ${path} is, or goes through, a symbolic link to something missing or outside the workspace; it is not followed.`;
    case 'ENXIO':
      return `The path ${path} is not a regular file (it is a socket or a device).`;
    case 'EACCES':
    case 'EPERM':
      return `The path ${path} cannot be written: permission denied.`;
    default:
      return undefined;
  }
}

/** Opens the file to replace (`w`) or extend (`a`) it, creating it and its directories when missing. */
async function openForSaving(root: string, target: string, mode: 'w' | 'a', label: string): Promise<FileHandle> {
  try {
    return await openInside(root, target, 'create', label);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return openInside(root, target, mode === 'a' ? 'append' : 'write', label);
  }
}

/**
 * OpenManus's file_saver (removed there in 2025, asked for since): writes text to a file in the
 * workspace. Relative paths are in the workspace; absolute ones must be inside it (OpenManus kept
 * only their base name); links out of it are not followed, checked on the file actually opened.
 */
export function createFileSaver(options: FileSaverOptions = {}) {
  const configured = options.workspace === undefined ? undefined : resolve(options.workspace);
  return defineTool({
    name: 'file_saver',
    description:
      'Save content to a file in the workspace (code, text, data, reports). A relative file_path is taken from the ' +
      'workspace; an absolute one must be inside it. Missing directories are created. mode "w" (default) replaces ' +
      'the file, "a" appends to it.',
    parameters: z.object({
      content: z.string().describe('The text to save.'),
      file_path: z.string().describe('Where to save it: relative to the workspace, or an absolute path inside it.'),
      mode: z.enum(['w', 'a']).default('w').describe('"w" to write (replace the file), "a" to append to it.'),
    }),
    execute: async ({ content, file_path, mode }, scope) => {
      if (file_path.trim() === '') return err('No file_path given: say where to save the content.');
      if (file_path.includes('\0')) return err('The file_path contains a NUL character; no file was written.');
      const workspace = workspaceOf(configured, scope);
      try {
        const { root, target } = await confineIn(
          workspace,
          isAbsolute(file_path) ? file_path : resolve(workspace, file_path),
        );
        const handle = await openForSaving(root, target, mode, file_path);
        try {
          const bytes = Buffer.from(content, 'utf8');
          if (mode === 'a') await handle.writeFile(bytes);
          else await writeAll(handle, bytes);
        } finally {
          await handle.close();
        }
        return ok(`Content successfully saved to ${target}`);
      } catch (error) {
        const message = refusal(error, file_path);
        if (message === undefined) throw error;
        return err(message);
      }
    },
  });
}
