// The local sandbox's files: its workspace on this host, every operation confined to it for the
// operation itself (see confinedFile.ts), so code running meanwhile cannot redirect one outside.
import { lstat, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import type { DirectoryEntry, Sandbox } from '../shell/sandboxPort.js';
import {
  NotRegularFileError,
  openInside,
  readAll,
  readDirectory,
  removeInside,
  specialKind,
  writeAll,
} from '../tools/confinedFile.js';
import { confineIn } from '../tools/workspace.js';

const errno = (code: string, path: string) => Object.assign(new Error(`${code}: ${path}`), { code });

type Files = Pick<Sandbox, 'readFile' | 'writeFile' | 'list' | 'remove' | 'copyIn' | 'copyOut'>;

const typeOf = (stats: import('node:fs').Stats): DirectoryEntry['type'] =>
  stats.isFile() ? 'file' : stats.isDirectory() ? 'directory' : stats.isSymbolicLink() ? 'symlink' : 'other';

/** The file operations of a sandbox whose workspace is `workspace` (a real path) on this host. */
export function localFiles(workspace: string): Files {
  const confined = (path: string) => confineIn(workspace, isAbsolute(path) ? path : resolve(workspace, path));

  const files: Files = {
    async readFile(path, options) {
      const { root, target } = await confined(path);
      const handle = await openInside(root, target, 'read', path);
      try {
        const stats = await handle.stat();
        if (stats.isDirectory()) throw errno('EISDIR', path);
        if (!stats.isFile()) throw new NotRegularFileError(specialKind(stats) ?? 'special file');
        return await readAll(handle, options?.maxBytes ?? stats.size);
      } finally {
        await handle.close();
      }
    },
    async writeFile(path, data) {
      const { root, target } = await confined(path);
      const bytes = typeof data === 'string' ? Buffer.from(data) : data;
      const handle = await openInside(root, target, 'write', path).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return openInside(root, target, 'create', path);
        throw error;
      });
      try {
        if (!(await handle.stat()).isFile()) throw new NotRegularFileError('special file');
        await writeAll(handle, bytes);
      } finally {
        await handle.close();
      }
    },
    async list(path) {
      const { root, target } = await confined(path);
      const handle = await openInside(root, target, 'read', path);
      try {
        if (!(await handle.stat()).isDirectory()) throw errno('ENOTDIR', path);
        const entries = await readDirectory(handle, target);
        return entries
          .map(({ name, stats }) => ({ name, type: typeOf(stats), size: stats.size }))
          .sort((a, b) => a.name.localeCompare(b.name));
      } finally {
        await handle.close();
      }
    },
    async remove(path) {
      // The entry itself goes (a link, not what it points to): only its directory is resolved.
      const full = isAbsolute(path) ? resolve(path) : resolve(workspace, path);
      if (full === workspace) throw errno('EBUSY', path);
      const { root, target: dir } = await confined(dirname(full));
      await removeInside(root, join(dir, basename(full)), path, { recursive: true });
    },
    // Copies go file by file through the confined operations: a link planted in the workspace
    // cannot send one outside. Host paths are the host's to choose.
    async copyIn(hostPath, sandboxPath) {
      const stats = await lstat(hostPath);
      if (!stats.isDirectory()) return files.writeFile(sandboxPath, await readFile(hostPath));
      const { target } = await confined(sandboxPath);
      for (const name of await readdir(hostPath)) await files.copyIn(join(hostPath, name), join(target, name));
    },
    async copyOut(sandboxPath, hostPath) {
      const { target } = await confined(sandboxPath);
      const bytes = await files.readFile(target).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'EISDIR') return undefined;
        throw error;
      });
      if (bytes) return writeFile(hostPath, bytes);
      await mkdir(hostPath, { recursive: true });
      for (const entry of await files.list(target)) {
        if (entry.type === 'file' || entry.type === 'directory') {
          await files.copyOut(join(target, entry.name), join(hostPath, entry.name));
        }
      }
    },
  };
  return files;
}
