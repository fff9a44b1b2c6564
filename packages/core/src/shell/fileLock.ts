import { link, open, rename, stat, unlink } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { codeOf, ignoreCode } from './errno.js';

/** A lock older than this was left by a writer that died holding it (a save takes milliseconds). */
const STALE_MS = 5_000;
const GIVE_UP_MS = 3 * STALE_MS;

/**
 * Runs `work` while holding the lock file `lockPath`, which works across processes: whoever
 * creates it (`wx` fails when it exists) holds the lock until it deletes it.
 */
export async function withFileLock<T>(lockPath: string, work: () => Promise<T>): Promise<T> {
  await acquire(lockPath);
  try {
    return await work();
  } finally {
    await unlink(lockPath).catch(ignoreCode('ENOENT'));
  }
}

async function acquire(lockPath: string): Promise<void> {
  const deadline = Date.now() + GIVE_UP_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      await (await open(lockPath, 'wx')).close();
      return;
    } catch (error) {
      if (codeOf(error) !== 'EEXIST') throw error;
    }
    if (await breakIfStale(lockPath)) continue;
    if (Date.now() > deadline) throw new Error(`gave up waiting for the lock ${lockPath}`);
    // Backoff with jitter, so waiting writers do not retry in lockstep.
    await sleep(Math.min(2 ** attempt, 20) * (0.5 + Math.random()));
  }
}

/** Removes the lock if it is stale; true when it is gone and worth another try at once. */
async function breakIfStale(lockPath: string): Promise<boolean> {
  const seen = await stat(lockPath).catch(ignoreCode('ENOENT'));
  if (!seen) return true;
  if (Date.now() - seen.mtimeMs < STALE_MS) return false;
  // Moved aside before it is deleted: of two breakers only one can move it, and a fresh lock
  // taken between our stat and the move (another inode) is put back.
  const aside = `${lockPath}.${crypto.randomUUID()}.stale`;
  try {
    await rename(lockPath, aside);
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return true;
    throw error;
  }
  const moved = await stat(aside);
  if (moved.ino !== seen.ino || moved.dev !== seen.dev) await link(aside, lockPath).catch(ignoreCode('EEXIST'));
  await unlink(aside);
  return true;
}
