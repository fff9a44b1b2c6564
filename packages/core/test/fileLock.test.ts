import { mkdtemp, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withFileLock } from '../src/shell/fileLock.js';

let dir: string;
let lock: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'openmanus-lock-'));
  lock = join(dir, 'store.lock');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The age at which src/shell/fileLock.ts breaks a lock. */
const STALE_MS = 5_000;

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('withFileLock', () => {
  it('lets one holder in at a time: concurrent read-modify-write loses nothing', async () => {
    let counter = 0;
    let inside = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 12 }, () =>
        withFileLock(lock, async () => {
          inside++;
          most = Math.max(most, inside);
          const read = counter;
          await settle();
          counter = read + 1;
          inside--;
        }),
      ),
    );
    expect(counter).toBe(12);
    expect(most).toBe(1);
    // Nothing is left behind: no lock, no stale copies.
    expect(await readdir(dir)).toEqual([]);
  });

  it('returns what the work returns, and releases the lock when the work fails', async () => {
    expect(await withFileLock(lock, async () => 'saved')).toBe('saved');
    await expect(
      withFileLock(lock, async () => {
        throw new Error('disk full');
      }),
    ).rejects.toThrow('disk full');
    expect(await readdir(dir)).toEqual([]);
    expect(await withFileLock(lock, async () => 'again')).toBe('again');
  });

  it('waits for a live holder (a fresh lock file) and gets the lock once it is gone', async () => {
    await writeFile(lock, '');
    const { mtimeMs } = await stat(lock);
    let enteredAt: number | undefined;
    const waiting = withFileLock(lock, async () => {
      enteredAt = Date.now();
    });
    await new Promise((resolve) => setTimeout(resolve, 60));
    // A slow machine may let the lock turn stale meanwhile: it must not be taken any sooner.
    if (enteredAt !== undefined) expect(enteredAt - mtimeMs).toBeGreaterThanOrEqual(STALE_MS);
    await rm(lock, { force: true });
    await waiting;
    expect(enteredAt).toBeDefined();
  });

  it('breaks a stale lock (left by a writer that died) at once, leaving no copy of it', async () => {
    await writeFile(lock, '');
    const old = new Date(Date.now() - 60_000);
    await utimes(lock, old, old);
    // Not broken, it would be waited for until the give-up error.
    expect(await withFileLock(lock, async () => 'in')).toBe('in');
    expect(await readdir(dir)).toEqual([]);
  });

  it('does not break a lock just under the stale age', async () => {
    await writeFile(lock, '');
    const recent = new Date(Date.now() - 3_000);
    await utimes(lock, recent, recent);
    let enteredAt: number | undefined;
    const waiting = withFileLock(lock, async () => {
      enteredAt = Date.now();
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Taken only once it has reached the stale age (which a slow machine may let happen meanwhile).
    if (enteredAt !== undefined) expect(enteredAt - recent.getTime()).toBeGreaterThanOrEqual(STALE_MS);
    await rm(lock, { force: true });
    await waiting;
  });

  it('reports a lock that cannot be created for another reason instead of waiting', async () => {
    const nowhere = join(dir, 'missing', 'store.lock');
    await expect(withFileLock(nowhere, async () => 'never')).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
