// A container's files as the sandbox's user sees them: each operation (copies too) is a helper
// script run as that user (never the daemon's root view of the archive endpoints), so it reaches
// only what code in the sandbox could reach, and what it creates belongs to that user. Inside the workspace no
// symbolic link leads out of it, and a file's own name is never followed (see containerScripts.ts).
import { posix } from 'node:path';
import { type DirectoryEntry, NotRegularFileError } from '@openmanus/core';
import { packForContainer, unpackOnHost } from './archive.js';
import {
  LIST_SCRIPT,
  PACK_SCRIPT,
  READ_SCRIPT,
  REMOVE_SCRIPT,
  UNPACK_SCRIPT,
  WRITE_SCRIPT,
} from './containerScripts.js';
import { type ExecContext, runScript } from './dockerExec.js';

/** The largest file `readFile` returns whole (the editor reads at most 10 MB; an image for the model is smaller). */
export const MAX_READ_BYTES = 64 * 1024 * 1024;

const ENTRY_TYPES: Readonly<Record<string, DirectoryEntry['type']>> = { f: 'file', d: 'directory', l: 'symlink' };

/** The helper scripts' refusals (and dd's), with the code Node's fs would give them. */
const CODES: readonly (readonly [RegExp, string])[] = [
  [/^not found$|No such file/, 'ENOENT'],
  [/^not a directory$|Not a directory/, 'ENOTDIR'],
  [/^is a directory$|Is a directory/, 'EISDIR'],
  [/symbolic link/, 'ELOOP'],
  [/Permission denied|^cannot make/, 'EACCES'],
  [/No such device or address/, 'ENXIO'],
];

/** A helper script's refusal at `path`, as the error Node's fs would throw. */
const refusal = (path: string) => (error: Error) => {
  if (error.message === 'not a regular file') throw new NotRegularFileError('special file');
  const code = CODES.find(([pattern]) => pattern.test(error.message))?.[1];
  throw Object.assign(new Error(`${path}: ${error.message}`), code ? { code } : {});
};

export interface ContainerFiles {
  /** The file's bytes; with `maxBytes`, the read stops there (the rest is not read). */
  readFile(path: string, maxBytes?: number): Promise<Buffer>;
  writeFile(path: string, data: Uint8Array): Promise<void>;
  list(path: string): Promise<DirectoryEntry[]>;
  remove(path: string): Promise<void>;
  /** Copies a host file or directory to `path` (its directory made as needed). */
  copyIn(hostPath: string, path: string): Promise<void>;
  /** Copies the file or directory at `path` to `hostPath` (a link as a link). */
  copyOut(path: string, hostPath: string): Promise<void>;
}

/** The file operations of the container in `context`, whose workspace is `workspace`; paths are absolute and resolved. */
export function containerFiles(context: ExecContext, workspace: string): ContainerFiles {
  const root = posix.resolve(workspace);
  const run = (script: string, path: string, args: readonly string[], options: Parameters<typeof runScript>[3] = {}) =>
    runScript(context, script, [root, ...args], options).catch(refusal(path));
  /** A file's directory and name; the root and the workspace itself are directories. */
  const split = (path: string) => {
    if (path === '/' || path === root) throw Object.assign(new Error(`${path}: is a directory`), { code: 'EISDIR' });
    return [posix.dirname(path), posix.basename(path)] as const;
  };

  return {
    async readFile(path, maxBytes) {
      const most = maxBytes ?? MAX_READ_BYTES + 1;
      const bytes = await run(READ_SCRIPT, path, [...split(path), String(most)], { maxOutputBytes: most });
      if (maxBytes === undefined && bytes.length > MAX_READ_BYTES)
        throw new Error(
          `${path}: larger than ${MAX_READ_BYTES / 1024 / 1024} MiB, too large to read here (copy it out)`,
        );
      return bytes;
    },
    async writeFile(path, data) {
      await run(WRITE_SCRIPT, path, split(path), { stdin: data });
    },
    async list(path) {
      const out = await run(LIST_SCRIPT, path, [path]);
      return out
        .toString('utf8')
        .split('\0')
        .filter(Boolean)
        .map((record) => {
          const [type = '', size = '0', ...name] = record.split(' ');
          return { name: name.join(' '), type: ENTRY_TYPES[type] ?? 'other', size: Number(size) };
        })
        .sort((a, b) => a.name.localeCompare(b.name));
    },
    async remove(path) {
      if (path === '/' || path === root) throw Object.assign(new Error(`${path}: busy`), { code: 'EBUSY' });
      await run(REMOVE_SCRIPT, path, split(path));
    },
    async copyIn(hostPath, path) {
      const [dir, name] = split(path);
      await run(UNPACK_SCRIPT, path, [dir], { stdin: packForContainer(hostPath, name) });
    },
    async copyOut(path, hostPath) {
      if (path === '/') throw Object.assign(new Error('/: the whole container cannot be copied'), { code: 'EISDIR' });
      const { sink, finished } = unpackOnHost(path, hostPath);
      // A failed pack leaves the extraction waiting for more: ended either way, its outcome awaited only on success.
      const packed = run(PACK_SCRIPT, path, [posix.dirname(path), posix.basename(path)], { stdout: sink }).finally(() =>
        sink.end(),
      );
      finished.catch(() => {});
      await packed;
      await finished;
    },
  };
}
