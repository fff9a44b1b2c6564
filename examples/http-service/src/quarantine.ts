import { mkdir, readdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** A run whose saved state could not be read: moved out of the store, kept for a person to look at. */
export interface QuarantinedRun {
  readonly id: string;
  readonly reason: string;
  /** Where its file is now (absent when the store keeps no file of it in the runs directory). */
  readonly file?: string;
}

const SUFFIX = '.jsonl';

/** The store's file of `id` in `runsDir` (core's file store names them `<escaped id>.jsonl`). */
async function fileOf(runsDir: string, id: string): Promise<string | undefined> {
  const names: string[] = await readdir(runsDir).catch(() => []);
  return names.find((name) => {
    if (!name.endsWith(SUFFIX)) return false;
    try {
      return decodeURIComponent(name.slice(0, -SUFFIX.length)) === id;
    } catch {
      return false;
    }
  });
}

/**
 * Moves the file of run `id` from `runsDir` into `quarantineDir`, next to a note saying why, so
 * the store no longer lists it and the service starts without it.
 */
export async function quarantine(
  runsDir: string,
  quarantineDir: string,
  id: string,
  reason: string,
): Promise<QuarantinedRun> {
  const name = await fileOf(runsDir, id);
  if (!name) return { id, reason };
  await mkdir(quarantineDir, { recursive: true, mode: 0o700 });
  const when = new Date().toISOString();
  const file = join(quarantineDir, `${when.replace(/[:.]/g, '-')}-${name}`);
  await rename(join(runsDir, name), file);
  await writeFile(
    `${file}.reason.txt`,
    `run ${id}\nmoved here from ${join(runsDir, name)} at ${when}\nbecause: ${reason}\n` +
      'The service started without it. Repair the file and move it back (as its original name) to resume the run.\n',
  );
  return { id, reason, file };
}
