// The files str_replace_editor works on: the workspace on this host (every operation confined to
// it, for the operation itself), or a sandbox's, through the sandbox port (whose provider confines
// each operation: the local one as here, a container by being one).
import { lstat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import type { Sandbox } from '../shell/sandboxPort.js';
import {
  type ListedEntry,
  listTwoLevels,
  NotRegularFileError,
  openInside,
  readAll,
  removeInside,
  writeAll,
} from './confinedFile.js';
import { confineIn, inside, outsideError, WorkspaceError } from './workspace.js';

/** A path opened for one command: what it is, and its content to read or replace. */
export interface OpenedPath {
  readonly kind: 'file' | 'directory' | 'other';
  /** The size a stat gave when it was opened: a hint, as the file may change since. */
  readonly size: number;
  /** Its content, at most `maxBytes` of it: the read itself stops there, however large the file is by then. */
  read(maxBytes: number): Promise<Buffer>;
  write(bytes: Uint8Array): Promise<void>;
  /** A directory's entries two levels deep, sorted, hidden ones left out. */
  list(): Promise<ListedEntry[]>;
  close(): Promise<void>;
}

/** The one path a command is about, checked to be inside the workspace. */
export interface EditorPath {
  /** The path as the editor records it (its undo history is keyed by it). */
  readonly target: string;
  exists(): Promise<boolean>;
  open(mode: 'read' | 'write'): Promise<OpenedPath>;
  /** Creates the file (and its directories); never replaces one. */
  create(bytes: Uint8Array): Promise<void>;
  remove(): Promise<void>;
}

const errno = (code: string) => Object.assign(new Error(code), { code });

/** `path` in the workspace on this host: opened once per command, through a checked handle. */
export async function workspacePath(workspace: string, path: string): Promise<EditorPath> {
  const { root, target } = await confineIn(workspace, path);
  return {
    target,
    exists: () =>
      lstat(target).then(
        () => true,
        () => false,
      ),
    async open(mode) {
      const handle = await openInside(root, target, mode, path);
      const info = await handle.stat().catch(async (error) => {
        await handle.close();
        throw error;
      });
      return {
        kind: info.isFile() ? 'file' : info.isDirectory() ? 'directory' : 'other',
        size: info.size,
        read: (maxBytes) => readAll(handle, maxBytes),
        write: (bytes) => writeAll(handle, bytes),
        list: () => listTwoLevels(handle, target),
        close: () => handle.close(),
      };
    },
    async create(bytes) {
      const handle = await openInside(root, target, 'create', path);
      try {
        await writeAll(handle, bytes);
      } finally {
        await handle.close();
      }
    },
    remove: () => removeInside(root, target, path),
  };
}

/** `path` in a sandbox's workspace, through its file operations. */
export function sandboxPath(sandbox: Sandbox, path: string): EditorPath {
  if (!isAbsolute(path)) throw new WorkspaceError(`The path ${path} is not an absolute path.`);
  const target = resolve(path);
  if (!inside(sandbox.workspace, target)) throw outsideError(path, sandbox.workspace);
  /** What is at `at`, as its directory lists it (the workspace itself is a directory). */
  const entryOf = async (at: string) => {
    if (at === sandbox.workspace) return { type: 'directory', size: 0 } as const;
    const entries = await sandbox.list(dirname(at)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return [];
      throw error;
    });
    return entries.find((entry) => entry.name === basename(at));
  };
  const listTwo = async (): Promise<ListedEntry[]> => {
    const out: ListedEntry[] = [];
    const walk = async (dir: string, depth: number) => {
      const entries = (await sandbox.list(dir)).filter((entry) => !entry.name.startsWith('.'));
      for (const entry of [...entries].sort((a, b) => a.name.localeCompare(b.name))) {
        const full = join(dir, entry.name);
        out.push(entry.type === 'other' ? { path: full, special: 'special file' } : { path: full });
        if (entry.type === 'directory' && depth < 2) await walk(full, depth + 1);
      }
    };
    await walk(target, 1);
    return out;
  };
  return {
    target,
    exists: async () => (await entryOf(target)) !== undefined,
    async open(mode) {
      const entry = await entryOf(target);
      if (!entry) throw errno('ENOENT');
      // As on the host: a link is never followed, a special file never opened.
      if (entry.type === 'symlink') throw errno('ELOOP');
      if (entry.type === 'other') throw new NotRegularFileError('special file');
      if (entry.type === 'directory' && mode === 'write') throw errno('EISDIR');
      return {
        kind: entry.type,
        size: entry.size,
        // A provider stops reading at maxBytes; cut here too, whatever one returns.
        read: async (maxBytes) => Buffer.from(await sandbox.readFile(target, { maxBytes })).subarray(0, maxBytes),
        write: (bytes) => sandbox.writeFile(target, bytes),
        list: listTwo,
        close: async () => {},
      };
    },
    async create(bytes) {
      if (await entryOf(target)) throw errno('EEXIST');
      await sandbox.writeFile(target, bytes);
    },
    remove: () => sandbox.remove(target),
  };
}
