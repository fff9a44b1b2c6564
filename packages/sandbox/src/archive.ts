// Copies in and out of a container through the Engine API's archive endpoints (tar streams).
import { basename, dirname, posix } from 'node:path';
import { Readable } from 'node:stream';
import type Docker from 'dockerode';
import * as tarFs from 'tar-fs';
import { engineCall } from './engineCall.js';

/** An error of the Engine API with its HTTP status (dockerode's `statusCode`). */
const statusOf = (error: unknown) => (error as { statusCode?: number } | null)?.statusCode;

/** An error about `path` with the code Node's fs would give it. */
const fsError = (path: string, what: string, code: string) => Object.assign(new Error(`${path}: ${what}`), { code });

/** Docker's 404 for a path, as the error a user reads. */
function notFound(error: unknown, path: string): Error {
  return statusOf(error) === 404 ? fsError(path, 'not found', 'ENOENT') : (error as Error);
}

/** How long an upload may take, its data included. */
const TRANSFER_MS = 300_000;

export interface Owner {
  readonly uid: number;
  readonly gid: number;
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
      // The header's own field holds uids below 262144 only; a pax record holds any.
      pax: { ...(header as { pax?: Record<string, string> }).pax, uid: String(owner.uid), gid: String(owner.gid) },
    }),
  });
  await engineCall(
    'archive upload',
    (abortSignal) => container.putArchive(Readable.from(pack), { path: posix.dirname(path), abortSignal }),
    TRANSFER_MS,
  );
}

/** Copies a file or directory of the container to `hostPath` (owned by this process, no setuid bits). */
export async function copyOutOfContainer(container: Docker.Container, path: string, hostPath: string): Promise<void> {
  const archive = (await engineCall('archive download', (abortSignal) =>
    container.getArchive({ path, abortSignal }),
  ).catch((error: unknown) => {
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
