// Which process holds which per-call uid, on disk: one file per leased uid naming its holder, so
// that another process can tell a uid in use from one a killed process left behind.
import { appendFileSync, lstatSync, mkdirSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { markAlive, ownMark } from './processOwner.js';

let dirCache: string | null | undefined;

/** The directory of lease files (root's only), or null when none can be used here. */
export function leaseDir(): string | null {
  if (dirCache !== undefined) return dirCache;
  dirCache = null;
  for (const base of ['/run', tmpdir()]) {
    const dir = join(base, 'openmanus-sandbox-uids');
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch {
      // There already, or no place for it.
    }
    try {
      const stat = lstatSync(dir);
      // Made by root, writable by root alone: a lease file no one else can forge or remove.
      if (stat.isDirectory() && stat.uid === 0 && (stat.mode & 0o022) === 0) {
        dirCache = dir;
        break;
      }
    } catch {
      // Not there: the next place.
    }
  }
  return dirCache;
}

/** Records that this process holds `uid`; false when another process's lease has it. */
export function recordLease(uid: number): boolean {
  const dir = leaseDir();
  if (!dir) return true;
  const file = join(dir, String(uid));
  try {
    writeFileSync(file, ownMark(), { flag: 'wx', mode: 0o600 });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return true;
    // Left by a process that is gone: ours now.
    if (leaseHolderAlive(uid)) return false;
    writeFileSync(file, ownMark(), { mode: 0o600 });
    return true;
  }
}

export function dropLease(uid: number): void {
  const dir = leaseDir();
  if (!dir) return;
  try {
    unlinkSync(join(dir, String(uid)));
  } catch {
    // Not there.
  }
}

/** A lease file: its holder's mark, then the workspaces lent to the uid, a line each. */
function leaseLines(uid: number): string[] {
  const dir = leaseDir();
  if (!dir) return [];
  try {
    return readFileSync(join(dir, String(uid)), 'utf8')
      .split('\n')
      .filter(Boolean);
  } catch {
    return [];
  }
}

/** Whether a running process holds `uid` by its lease file. */
export const leaseHolderAlive = (uid: number): boolean => markAlive(leaseLines(uid)[0] ?? '');

/** The workspaces lent to `uid` under its lease (kept however the holder ended). */
export const lentWorkspaces = (uid: number): string[] => leaseLines(uid).slice(1);

/** Notes in the lease of `uid` that `workspace` is lent to it. */
export function recordLent(uid: number, workspace: string): void {
  const dir = leaseDir();
  if (!dir || lentWorkspaces(uid).includes(workspace)) return;
  try {
    appendFileSync(join(dir, String(uid)), `\n${workspace}`);
  } catch {
    // No lease file (not leased here).
  }
}

/** The uids whose lease files name a process that is gone. */
export function staleLeases(): number[] {
  const dir = leaseDir();
  if (!dir) return [];
  return readdirSync(dir)
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((uid) => !leaseHolderAlive(uid));
}
