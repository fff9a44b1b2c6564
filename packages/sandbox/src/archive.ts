// The tar streams of copies between the host and a container: packed from a host file or
// directory, and unpacked onto the host (owned by this process, no setuid bits, nothing outside
// the target: tar-fs's checks). The container's end runs as the sandbox's user (containerFiles.ts).
import { basename, dirname, posix } from 'node:path';
import { Readable, type Writable } from 'node:stream';
import * as tarFs from 'tar-fs';

/** Renames the archive's top entry (`from`) to `to`, keeping what lies under it. */
const renameTop = (name: string, from: string, to: string) =>
  name === from || name.startsWith(`${from}/`) ? to + name.slice(from.length) : undefined;

/** A host file or directory as a tar stream whose top entry is named `to`. */
export function packForContainer(hostPath: string, to: string): Readable {
  const from = basename(hostPath);
  const pack = tarFs.pack(dirname(hostPath), {
    entries: [from],
    map: (header) => ({ ...header, name: renameTop(header.name, from, to) ?? header.name }),
  });
  // tar-fs's streams are streamx ones: Node's Readable wraps them for the exec's stream.
  return Readable.from(pack);
}

/**
 * Where a tar stream whose top entry is `from` (a container path's name) is unpacked to
 * `hostPath`; `finished` resolves once all of it is written.
 */
export function unpackOnHost(
  from: string,
  hostPath: string,
): { readonly sink: Writable; readonly finished: Promise<void> } {
  const to = basename(hostPath);
  const extract = tarFs.extract(dirname(hostPath), {
    // Owned by this process, whatever uid the container wrote (tar-fs 3's option; its types are older).
    ...({ chown: false } as object),
    map: (header) => ({ ...header, name: renameTop(header.name, posix.basename(from), to) ?? '' }),
    // Only what lies under the copied entry lands on the host.
    ignore: (_name, header) => !header?.name,
  });
  const finished = new Promise<void>((resolve, reject) => {
    extract.on('error', reject);
    extract.on('finish', resolve);
  });
  return { sink: extract, finished };
}
