// What a per-call uid leaves where every user may write (/tmp, /var/tmp, /dev/shm and the like):
// found by owner, removed as that uid itself, so no link planted meanwhile can turn the removal
// on a file the uid could not remove anyway.
import { lstat, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadChildProcess as childProcess } from '../lazyModule.js';

const sharedDirs = () => [...new Set(['/tmp', '/var/tmp', '/dev/shm', '/dev/mqueue', '/run/lock', tmpdir()])];

/** The entries directly in the shared directories whose owner `owned` accepts, by owner. */
async function leftovers(owned: (uid: number) => boolean): Promise<Map<number, string[]>> {
  const found = new Map<number, string[]>();
  for (const dir of sharedDirs()) {
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names) {
      const path = join(dir, name);
      const stat = await lstat(path).catch(() => undefined);
      if (!stat || !owned(stat.uid)) continue;
      found.set(stat.uid, [...(found.get(stat.uid) ?? []), path]);
    }
  }
  return found;
}

/** Removes `paths` as `uid` (what it cannot remove stays). */
function removeAs(uid: number, paths: readonly string[]): Promise<void> {
  return new Promise((resolve) => {
    const child = childProcess().spawn('rm', ['-rf', '--one-file-system', '--', ...paths], {
      uid,
      gid: uid,
      env: { PATH: '/usr/bin:/bin' },
      stdio: 'ignore',
      timeout: 60_000,
    });
    child.on('error', () => resolve());
    child.on('close', () => resolve());
  });
}

const overlaps = (a: string, b: string) => a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);

/**
 * Removes what `uid` left in the shared directories (call it once no process of the uid runs),
 * except the workspaces it was lent (a workspace in /tmp is the uid's while lent) and what holds
 * them.
 */
export async function removeLeftovers(uid: number, workspaces: readonly string[]): Promise<void> {
  const paths = (await leftovers((owner) => owner === uid)).get(uid) ?? [];
  const removable = paths.filter((path) => !workspaces.some((workspace) => overlaps(path, workspace)));
  if (removable.length > 0) await removeAs(uid, removable);
}
