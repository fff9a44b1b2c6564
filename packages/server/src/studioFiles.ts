import { readdir, readFile } from 'node:fs/promises';
import { extname } from 'node:path';

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/** Headers that keep other sites out of the studio: nothing but its own files, never framed. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

export interface StudioFile {
  readonly type: string;
  readonly body: Uint8Array;
}

/** The studio's files (the package's `studio/` folder), read once, by name: nothing outside it can be asked for. */
export async function loadStudio(): Promise<ReadonlyMap<string, StudioFile>> {
  const dir = new URL('../studio/', import.meta.url);
  const files = new Map<string, StudioFile>();
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const type = TYPES[extname(name)];
    if (type) files.set(name, { type, body: await readFile(new URL(name, dir)) });
  }
  return files;
}
