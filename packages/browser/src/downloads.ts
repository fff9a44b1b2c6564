import { basename, extname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { confineIn, openInside } from '@openmanus/core';
import { removeInside } from '@openmanus/core/internal';
import type { Download } from 'playwright-core';

/** The folder of the workspace downloads are saved in. */
export const DOWNLOADS_DIR = 'downloads';

/**
 * A file name that is safe to create: the last path segment of what the site suggested, without
 * control or path characters or leading dots, at most 120 characters; `download` if nothing is left.
 */
export function safeFileName(suggested: string): string {
  const last = basename(suggested.replaceAll('\\', '/'));
  const cleaned = [...last]
    .map((char) => (char.charCodeAt(0) < 0x20 || char === '\u007f' || '/:*?"<>|'.includes(char) ? '_' : char))
    .join('')
    .replace(/^[.\s]+/, '')
    .trim();
  if (!cleaned) return 'download';
  if (cleaned.length <= 120) return cleaned;
  const ext = extname(cleaned).slice(0, 20);
  return cleaned.slice(0, 120 - ext.length) + ext;
}

/** `name`, then `name (1)`, `name (2)`… before the extension. */
const numbered = (name: string, n: number) => {
  if (n === 0) return name;
  const ext = extname(name);
  return `${name.slice(0, name.length - ext.length)} (${n})${ext}`;
};

/** Passes bytes through, counting them, and fails past `max`. */
function counting(max: number, name: string): Transform & { readonly size: number } {
  let size = 0;
  const transform = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > max) done(new Error(`${name} is larger than ${max} bytes; it was not kept`));
      else done(null, chunk);
    },
  });
  return Object.defineProperty(transform, 'size', { get: () => size }) as Transform & { readonly size: number };
}

/** Where a download was saved: its path relative to the workspace, and its size. */
export interface SavedDownload {
  readonly path: string;
  readonly bytes: number;
}

/**
 * Saves a download into `<workspace>/downloads/` under the name the site suggested, made safe and
 * never replacing a file (a number is added instead). The file is created inside the workspace
 * through core's `openInside`, so a link planted in the folder cannot lead the write out of it.
 * One larger than `maxBytes` is removed, and the error says so.
 */
export async function saveDownload(download: Download, workspace: string, maxBytes: number): Promise<SavedDownload> {
  const name = safeFileName(download.suggestedFilename());
  for (let n = 0; ; n++) {
    const relative = join(DOWNLOADS_DIR, numbered(name, n));
    const { root, target } = await confineIn(workspace, join(workspace, relative));
    let handle: Awaited<ReturnType<typeof openInside>>;
    try {
      handle = await openInside(root, target, 'create', relative);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST' && n < 1000) continue;
      throw error;
    }
    const counter = counting(maxBytes, relative);
    try {
      // The write stream closes the handle when it ends.
      await pipeline(await download.createReadStream(), counter, handle.createWriteStream());
      return { path: relative, bytes: counter.size };
    } catch (error) {
      await handle.close().catch(() => {});
      await removeInside(root, target, relative).catch(() => {});
      throw error;
    }
  }
}
