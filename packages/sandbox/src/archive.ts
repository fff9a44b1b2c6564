// Files in and out of a container through the Engine API's archive endpoints (tar streams).
import { basename, dirname, posix } from 'node:path';
import { Readable } from 'node:stream';
import type Docker from 'dockerode';
import * as tarFs from 'tar-fs';
import * as tarStream from 'tar-stream';

/** An error of the Engine API with its HTTP status (dockerode's `statusCode`). */
const statusOf = (error: unknown) => (error as { statusCode?: number } | null)?.statusCode;

/** An error about `path` with the code Node's fs would give it. */
const fsError = (path: string, what: string, code: string) => Object.assign(new Error(`${path}: ${what}`), { code });

/** Docker's 404 for a path, as the error a user reads. */
export function notFound(error: unknown, path: string): Error {
  return statusOf(error) === 404 ? fsError(path, 'not found', 'ENOENT') : (error as Error);
}

export interface Owner {
  readonly uid: number;
  readonly gid: number;
}

/** Reads one file; a symbolic link is followed (up to 16 links). */
export async function readFromContainer(container: Docker.Container, path: string): Promise<Buffer> {
  let current = path;
  for (let hops = 0; hops < 16; hops++) {
    const archive = await container.getArchive({ path: current }).catch((error: unknown) => {
      throw notFound(error, path);
    });
    const entry = await firstEntry(archive as unknown as Readable);
    if (entry.type === 'file') return entry.data;
    if (entry.type === 'directory') throw fsError(path, 'is a directory', 'EISDIR');
    if (entry.type !== 'symlink' || !entry.linkname) throw new Error(`${path}: not a regular file`);
    current = posix.resolve(posix.dirname(current), entry.linkname);
  }
  throw new Error(`${path}: too many levels of symbolic links`);
}

async function firstEntry(archive: Readable): Promise<{ type: string; linkname?: string; data: Buffer }> {
  const extract = tarStream.extract();
  archive.pipe(extract);
  for await (const entry of extract) {
    const chunks: Buffer[] = [];
    for await (const chunk of entry) chunks.push(chunk as Buffer);
    archive.unpipe(extract);
    archive.destroy();
    const { type, linkname } = entry.header;
    return { type: type ?? 'file', ...(linkname ? { linkname } : {}), data: Buffer.concat(chunks) };
  }
  throw new Error('the archive is empty');
}

/** Writes one file (replacing it), owned by `owner`; throws Docker's 404 when the directory is missing. */
export async function writeToContainer(
  container: Docker.Container,
  path: string,
  data: Uint8Array,
  owner: Owner,
): Promise<void> {
  const pack = tarStream.pack();
  pack.entry(
    { name: posix.basename(path), mode: 0o644, uid: owner.uid, gid: owner.gid, size: data.length },
    Buffer.from(data),
  );
  pack.finalize();
  // tar-stream's streams are streamx ones: Node's Readable wraps them for the HTTP client.
  await container.putArchive(Readable.from(pack), { path: posix.dirname(path) });
}

/** Renames the archive's top entry (`from`) to `to`, keeping what lies under it. */
const renameTop = (name: string, from: string, to: string) =>
  name === from || name.startsWith(`${from}/`) ? to + name.slice(from.length) : undefined;

/** Copies a host file or directory to `path` in the container, owned by `owner`. */
export async function copyIntoContainer(
  container: Docker.Container,
  hostPath: string,
  path: string,
  owner: Owner,
): Promise<void> {
  const from = basename(hostPath);
  const to = posix.basename(path);
  const pack = tarFs.pack(dirname(hostPath), {
    entries: [from],
    map: (header) => ({
      ...header,
      name: renameTop(header.name, from, to) ?? header.name,
      uid: owner.uid,
      gid: owner.gid,
    }),
  });
  await container.putArchive(Readable.from(pack), { path: posix.dirname(path) });
}

/** Copies a file or directory of the container to `hostPath` (owned by this process, no setuid bits). */
export async function copyOutOfContainer(container: Docker.Container, path: string, hostPath: string): Promise<void> {
  const archive = (await container.getArchive({ path }).catch((error: unknown) => {
    throw notFound(error, path);
  })) as unknown as Readable;
  const from = posix.basename(path);
  const to = basename(hostPath);
  const extract = tarFs.extract(dirname(hostPath), {
    // Owned by this process, whatever uid the container wrote (tar-fs 3's option; its types are older).
    ...({ chown: false } as object),
    map: (header) => ({ ...header, name: renameTop(header.name, from, to) ?? '' }),
    // Only what lies under the copied entry lands on the host.
    ignore: (_name, header) => !header?.name,
  });
  await new Promise<void>((resolve, reject) => {
    archive.on('error', reject);
    extract.on('error', reject);
    extract.on('finish', resolve);
    archive.pipe(extract);
  });
}
