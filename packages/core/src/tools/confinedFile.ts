import { constants, type Dirent, type Stats } from 'node:fs';
import { access, type FileHandle, lstat, mkdir, open, readdir, readlink, realpath, rm, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { hasErrorCode, OpenManusError } from '../errors.js';
import { inside, outsideError } from './workspace.js';

// Opening files inside the workspace so that the check holds for what is actually opened.
//
// A path checked with realpath() can change before it is used: a dangling symlink gets written
// through, a directory swapped for a symlink in a race leads out. So nothing here opens a path
// that a link could redirect. On Linux the directory is opened first and checked (the real path
// of an open descriptor, read from /proc/self/fd, is what was opened, whatever the path does
// since), and the file is then opened *through that descriptor* (`/proc/self/fd/<dir>/<name>`,
// Node's openat) without following a symlink in its name. Missing directories are made the same
// way, one at a time. Elsewhere (no /proc) the file is opened without following a final symlink
// and then compared with what its path names inside the workspace: a weaker check, still after
// the open.

const { O_RDONLY, O_RDWR, O_WRONLY, O_CREAT, O_EXCL, O_APPEND } = constants;
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
// A FIFO opened for reading waits for a writer (forever, holding a libuv thread): never wait.
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
const O_DIRECTORY = constants.O_DIRECTORY ?? 0;

/** `append`: an existing file, every write at its end. */
export type OpenMode = 'read' | 'write' | 'append' | 'create';

const FLAGS: Record<OpenMode, number> = {
  read: O_RDONLY | O_NOFOLLOW | O_NONBLOCK,
  write: O_RDWR | O_NOFOLLOW | O_NONBLOCK,
  append: O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK,
  create: O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW,
};

export interface ConfinedOptions {
  /** Open through /proc/self/fd (default: where it exists). Off only to test the fallback. */
  readonly viaProc?: boolean;
}

/** A path that names something other than a regular file or a directory. */
export class NotRegularFileError extends OpenManusError<'NOT_REGULAR_FILE'> {
  static readonly codes = ['NOT_REGULAR_FILE'] as const;
  override readonly name = 'NotRegularFileError';
  constructor(readonly kind: string) {
    super('NOT_REGULAR_FILE', `not a regular file (${kind})`);
  }
  static override isInstance(value: unknown): value is NotRegularFileError {
    return hasErrorCode(value, NotRegularFileError.codes);
  }
}

/** What kind of special file this is, or undefined for a regular file, a directory or a symlink. */
export function specialKind(entry: Stats | Dirent): string | undefined {
  if (entry.isFIFO()) return 'named pipe';
  if (entry.isSocket()) return 'socket';
  if (entry.isCharacterDevice() || entry.isBlockDevice()) return 'device';
  return undefined;
}

let procChecked: Promise<boolean> | undefined;
const procAvailable = () =>
  (procChecked ??= access('/proc/self/fd').then(
    () => process.platform === 'linux',
    () => false,
  ));
const useProc = async (options: ConfinedOptions) => options.viaProc ?? (await procAvailable());

/** The path of what a descriptor has open, or of `name` in the directory it has open. */
const viaFd = (fd: number, name?: string) =>
  name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`;

const errno = (code: string) => Object.assign(new Error(code), { code });

/** Closes the handle and throws unless what it has open is inside `root`. */
async function checkInside(root: string, handle: FileHandle, label: string): Promise<FileHandle> {
  const real = await readlink(viaFd(handle.fd)).catch(async (error) => {
    await handle.close();
    throw error;
  });
  if (inside(root, real)) return handle;
  await handle.close();
  throw outsideError(label, root);
}

/** Opens directory `dir` (a path inside `root`), checked; with `create`, makes what is missing of it. */
async function openDir(root: string, dir: string, label: string, create: boolean): Promise<FileHandle> {
  try {
    return await checkInside(root, await open(dir, O_RDONLY | O_DIRECTORY), label);
  } catch (error) {
    if (!create || (error as NodeJS.ErrnoException).code !== 'ENOENT' || dir === root) throw error;
  }
  const parent = await openDir(root, dirname(dir), label, true);
  try {
    const at = viaFd(parent.fd, basename(dir));
    await mkdir(at).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    // A symlink planted here meanwhile is refused (ELOOP), not followed.
    return await open(at, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } finally {
    await parent.close();
  }
}

/**
 * Opens `target` (a path `confineIn` returned for `root`) as `mode` says, never through a
 * symlink in its last component, and only if what was opened is inside `root`. A file that is
 * not regular (a FIFO, a socket, a device) is refused before it is opened. `label` is the path as
 * the caller was given it, for messages. Errors: WorkspaceError, NotRegularFileError, or the
 * system's (ENOENT, EEXIST, ELOOP for a symlink, EISDIR, ENOTDIR).
 */
export async function openInside(
  root: string,
  target: string,
  mode: OpenMode,
  label: string,
  options: ConfinedOptions = {},
): Promise<FileHandle> {
  if (target === root) {
    // The workspace itself: a directory, so it is only read.
    if (mode !== 'read') throw errno(mode === 'create' ? 'EEXIST' : 'EISDIR');
    return checkInside(root, await open(root, O_RDONLY | O_DIRECTORY), label);
  }
  if (!(await useProc(options))) return openByPath(root, target, mode, label);
  const dir = await openDir(root, dirname(target), label, mode === 'create');
  try {
    const at = viaFd(dir.fd, basename(target));
    if (mode !== 'create') {
      const kind = specialKind(await lstat(at));
      if (kind) throw new NotRegularFileError(kind);
    }
    const handle = await open(at, FLAGS[mode], 0o666);
    // What was just opened in a checked directory without following a link is inside; checked
    // again all the same, and a file created where it must not be is removed.
    return await checkInside(root, handle, label).catch(async (error) => {
      if (mode === 'create') await unlink(at).catch(() => {});
      throw error;
    });
  } finally {
    await dir.close();
  }
}

/** Without /proc: open, then check that the path still names what was opened, inside `root`. */
async function openByPath(root: string, target: string, mode: OpenMode, label: string): Promise<FileHandle> {
  if (mode === 'create') await mkdir(dirname(target), { recursive: true });
  else {
    const kind = specialKind(await lstat(target));
    if (kind) throw new NotRegularFileError(kind);
  }
  const handle = await open(target, FLAGS[mode], 0o666);
  try {
    const [parent, opened, named] = await Promise.all([realpath(dirname(target)), handle.stat(), lstat(target)]);
    const same = opened.dev === named.dev && opened.ino === named.ino;
    if (inside(root, join(parent, basename(target))) && same) return handle;
    // Created outside: removed, as far as the path still names it (this check is not atomic).
    if (mode === 'create' && same) await unlink(target).catch(() => {});
    throw outsideError(label, root);
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * Removes the file `target` names (not what a symlink there points to), in a checked directory;
 * with `recursive`, a directory too, with everything in it (links in it are removed, not followed).
 */
export async function removeInside(
  root: string,
  target: string,
  label: string,
  options: ConfinedOptions & { readonly recursive?: boolean } = {},
): Promise<void> {
  const remove = (path: string) => (options.recursive ? rm(path, { recursive: true }) : unlink(path));
  if (target === root) throw errno('EBUSY');
  if (!(await useProc(options))) {
    if (!inside(root, join(await realpath(dirname(target)), basename(target)))) throw outsideError(label, root);
    return remove(target);
  }
  const dir = await openDir(root, dirname(target), label, false);
  try {
    await remove(viaFd(dir.fd, basename(target)));
  } finally {
    await dir.close();
  }
}

/** The entries of the directory the handle has open (opened by `openInside`), with what each is (not following links). */
export async function readDirectory(
  handle: FileHandle,
  shown: string,
  options: ConfinedOptions = {},
): Promise<Array<{ readonly name: string; readonly stats: Stats }>> {
  const where = (await useProc(options)) ? viaFd(handle.fd) : shown;
  const names = await readdir(where);
  const found = await Promise.all(
    names.map(async (name) => {
      const stats = await lstat(join(where, name)).catch(() => undefined);
      return stats ? { name, stats } : undefined;
    }),
  );
  return found.filter((entry) => entry !== undefined);
}

/** The first buffer a read fills: small files take one read, large ones grow it by doubling. */
const FIRST_READ_BYTES = 64 * 1024;

/**
 * Reads a regular file the handle has open from its start to its end, but never more than `max`
 * bytes, whatever a stat said its size was: a file can grow between the stat and the read (code
 * in a sandbox flipping it between 6 bytes and 200 MB), and the bound must hold for the read.
 */
export async function readAll(handle: FileHandle, max: number): Promise<Buffer> {
  let buffer = Buffer.allocUnsafe(Math.min(max, FIRST_READ_BYTES));
  let filled = 0;
  while (filled < max) {
    if (filled === buffer.length) {
      const grown = Buffer.allocUnsafe(Math.min(max, buffer.length * 2));
      buffer.copy(grown, 0, 0, filled);
      buffer = grown;
    }
    const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

/** Replaces the content of the file the handle has open (opened for writing) with `bytes`. */
export async function writeAll(handle: FileHandle, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, written, bytes.length - written, written);
    written += bytesWritten;
  }
  await handle.truncate(bytes.length);
}

export interface ListedEntry {
  readonly path: string;
  /** Set for a special file (named pipe, socket, device): it is listed, never opened. */
  readonly special?: string;
}

/**
 * The entries of the directory the handle has open, two levels deep, sorted, without hidden
 * ones, as `shown` + their names. Subdirectories are opened through their parent's descriptor,
 * never through a symlink. Without /proc, they are read by path (names only are read).
 */
export async function listTwoLevels(
  handle: FileHandle,
  shown: string,
  options: ConfinedOptions = {},
): Promise<ListedEntry[]> {
  const proc = await useProc(options);
  const out: ListedEntry[] = [];
  const walk = async (where: string, fd: number | undefined, current: string, depth: number) => {
    const entries: Dirent[] = (await readdir(fd === undefined ? where : viaFd(fd), { withFileTypes: true })).filter(
      (e) => !e.name.startsWith('.'),
    );
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      const full = join(current, entry.name);
      const special = specialKind(entry);
      out.push(special ? { path: full, special } : { path: full });
      if (!entry.isDirectory() || depth >= 2) continue;
      if (fd === undefined) {
        await walk(join(where, entry.name), undefined, full, depth + 1);
        continue;
      }
      const sub = await open(viaFd(fd, entry.name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW).catch(() => undefined);
      if (!sub) continue;
      try {
        await walk('', sub.fd, full, depth + 1);
      } finally {
        await sub.close();
      }
    }
  };
  await walk(shown, proc ? handle.fd : undefined, shown, 1);
  return out;
}
