import { type Dirent, readdirSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, relative } from 'node:path';
import type { Artifact } from '@a2a-js/sdk';
import { artifact, filePart, textPart } from './parts.js';

/** Bounds on what a finished task returns of the files its run wrote. */
const MAX_FILES = 20;
const MAX_FILE_BYTES = 1024 * 1024;
const MAX_TOTAL_BYTES = 8 * 1024 * 1024;
const SKIPPED = new Set(['node_modules', '.git']);

const MEDIA_TYPES: Readonly<Record<string, string>> = {
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.html': 'text/html',
  '.css': 'text/css',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.js': 'text/javascript',
  '.ts': 'text/plain',
  '.py': 'text/x-python',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.pdf': 'application/pdf',
};

function filesUnder(directory: string): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(directory, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return SKIPPED.has(entry.name) ? [] : filesUnder(path);
    return entry.isFile() ? [path] : [];
  });
}

/** How far before a run's start a file's time may read and still count as changed by it. */
const MTIME_SLACK_MS = 1_000;

/**
 * The files of `workspace` changed since `since` (ms), as artifacts `file:<path>` holding their
 * bytes: at most 20 files, 1 MiB each, 8 MiB in all (a bigger one is named, without its bytes).
 * Links are never followed, so nothing outside the workspace is read.
 */
export async function changedFiles(workspace: string, since: number): Promise<Artifact[]> {
  const changed: { path: string; size: number }[] = [];
  for (const path of filesUnder(workspace)) {
    const info = await stat(path).catch(() => undefined);
    // A file's time comes from the kernel's coarse clock, which may read a little before `since`.
    if (info && info.mtimeMs >= since - MTIME_SLACK_MS) changed.push({ path, size: info.size });
  }
  let total = 0;
  const artifacts: Artifact[] = [];
  for (const { path, size } of changed.slice(0, MAX_FILES)) {
    const name = relative(workspace, path);
    const mediaType = MEDIA_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream';
    if (size > MAX_FILE_BYTES || total + size > MAX_TOTAL_BYTES) {
      const note = textPart(`${name} (${size} bytes) is too big to send: read it from the workspace`);
      artifacts.push(artifact(`file:${name}`, name, [note]));
      continue;
    }
    total += size;
    const bytes = await readFile(path).catch(() => undefined);
    if (bytes) artifacts.push(artifact(`file:${name}`, name, [filePart(bytes, name, mediaType)]));
  }
  return artifacts;
}
