import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CheckpointStore } from '@openmanus/core';

/** A run whose saved state could not be read: taken out of the store, kept for a person to look at. */
export interface QuarantinedRun {
  readonly id: string;
  readonly reason: string;
  /** Where what could be read of it was written (absent when not even its raw state could be read). */
  readonly file?: string;
}

/**
 * Takes run `id` out of `store` so the service starts without it: what the store still returns
 * of it goes to `<quarantineDir>/<time>-<id>.json`, next to a note saying why and how to put it back.
 */
export async function quarantine(
  store: CheckpointStore,
  quarantineDir: string,
  id: string,
  reason: string,
): Promise<QuarantinedRun> {
  const raw = await store.load(id).catch(() => undefined);
  await mkdir(quarantineDir, { recursive: true, mode: 0o700 });
  const when = new Date().toISOString();
  const file = join(quarantineDir, `${when.replace(/[:.]/g, '-')}-${encodeURIComponent(id)}.json`);
  if (raw) await writeFile(file, `${JSON.stringify(raw.state, null, 2)}\n`, { mode: 0o600 });
  await writeFile(
    `${file}.reason.txt`,
    `run ${id}\ntaken out of the store at ${when}\nbecause: ${reason}\n` +
      (raw
        ? `Its saved state (version ${raw.version}) is in ${file}. Repair it and save it back under the run's id ` +
          '(store.save(id, state, 0)) to resume the run.\n'
        : 'Not even its raw state could be read from the store.\n'),
    { mode: 0o600 },
  );
  await store.delete(id);
  return { id, reason, ...(raw ? { file } : {}) };
}
