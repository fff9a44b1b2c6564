import { resolve } from 'node:path';
import { defineTool, err, ok } from '@openmanus/core';
import { z } from 'zod';
import { WorkspaceFileError, workspaceOf, writeInside } from './workspace.js';

export interface FileSaverOptions {
  /** Where files are saved (default: the run's workspace, else `./workspace`). */
  readonly workspace?: string;
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
      try {
        const target = await writeInside(
          workspaceOf(configured, scope),
          file_path,
          content,
          mode === 'a' ? 'append' : 'replace',
        );
        return ok(`Content successfully saved to ${target}`);
      } catch (error) {
        if (error instanceof WorkspaceFileError) return err(error.message);
        throw error;
      }
    },
  });
}
