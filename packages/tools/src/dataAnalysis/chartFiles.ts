// The files data_visualization reads (the chart list, the CSVs) and writes (the charts): the
// workspace on this host, or the run's sandbox through its file operations. Charts are drawn in
// this process either way — Vega needs no browser, runs nothing the model wrote and loads nothing —
// so with a sandbox only the files cross, each operation confined by the sandbox's provider (a
// container by being one, the local one to its workspace).
import { posix } from 'node:path';
import type { Sandbox } from '@openmanus/core';
import { sandboxPath } from '@openmanus/core/internal';
import { readInside, refusal, taken, tooLarge, WorkspaceFileError, writeInside } from '../workspace.js';

export interface ChartFiles {
  /** The text of a regular file (absolute, or relative to the workspace), refused when larger than `maxBytes`. */
  read(path: string, maxBytes: number): Promise<string>;
  /** Whether anything (a file, a link, a directory) has this name. */
  taken(path: string): Promise<boolean>;
  /** Makes the file, never replacing one; gives its path. */
  create(path: string, content: string): Promise<string>;
}

/** The workspace on this host. */
export const hostChartFiles = (workspace: string): ChartFiles => ({
  read: (path, maxBytes) => readInside(workspace, path, maxBytes),
  taken: (path) => taken(workspace, path),
  create: (path, content) => writeInside(workspace, path, content, 'new'),
});

/** The workspace of a run's sandbox. Refusals say why, as on the host. */
export function sandboxChartFiles(sandbox: Sandbox): ChartFiles {
  const at = (path: string) => {
    if (path.includes('\0')) throw new WorkspaceFileError(`The path ${JSON.stringify(path)} contains a NUL character.`);
    return sandboxPath(sandbox, posix.resolve(sandbox.workspace, path));
  };
  const explained = async <T>(path: string, use: () => Promise<T>): Promise<T> => {
    try {
      return await use();
    } catch (error) {
      const message = refusal(error, path);
      throw message === undefined ? error : new WorkspaceFileError(message);
    }
  };
  return {
    read: (path, maxBytes) =>
      explained(path, async () => {
        const opened = await at(path).open('read');
        if (opened.kind === 'directory') throw Object.assign(new Error('directory'), { code: 'EISDIR' });
        if (opened.size > maxBytes) throw tooLarge(path, opened.size, maxBytes);
        // One byte more than allowed tells a file that grew since it was listed.
        const bytes = await opened.read(maxBytes + 1);
        if (bytes.length > maxBytes) throw tooLarge(path, bytes.length, maxBytes);
        return bytes.toString('utf8');
      }),
    taken: (path) => explained(path, () => at(path).exists()),
    create: (path, content) =>
      explained(path, async () => {
        const target = at(path);
        await target.create(Buffer.from(content, 'utf8'));
        return target.target;
      }),
  };
}
