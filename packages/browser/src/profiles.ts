import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startTimeOf } from '@openmanus/core/internal';

// Playwright starts Chromium with a fresh profile in the temporary directory (cookies, storage,
// cache) and removes it when the browser closes; a process killed outright (SIGKILL, OOM) leaves it
// behind. Each profile of a browser started here is marked with this process (pid and start time),
// and the next start removes the profiles whose process is gone: only ours, never a live one.

const PROFILE_PREFIX = 'playwright_chromiumdev_profile-';
const OWNER_FILE = 'openmanus-owner.json';

interface Owner {
  readonly pid: number;
  /** The process's start time (clock ticks after boot, /proc/<pid>/stat): a pid is reused, the pair is not. */
  readonly started: string;
}

const parentOf = async (pid: string): Promise<number | undefined> => {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  const parent = stat?.slice(stat.lastIndexOf(')') + 2).split(' ')[1];
  return parent === undefined ? undefined : Number(parent);
};

/** The profiles in the temporary directory of the browsers this process started (its children's `--user-data-dir`). */
async function ownProfiles(): Promise<string[]> {
  const pids = (await readdir('/proc').catch(() => [])).filter((name) => /^\d+$/.test(name));
  const profiles: string[] = [];
  for (const pid of pids) {
    if ((await parentOf(pid)) !== process.pid) continue;
    const args = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
    const dir = args.find((arg) => arg.startsWith('--user-data-dir='))?.slice('--user-data-dir='.length);
    if (dir && dirname(dir) === tmpdir() && dir.slice(tmpdir().length + 1).startsWith(PROFILE_PREFIX)) {
      profiles.push(dir);
    }
  }
  return profiles;
}

/** Marks the profiles of the browsers this process runs as its own (after a launch). */
export async function markOwnProfiles(): Promise<void> {
  const started = startTimeOf(process.pid);
  if (started === undefined) return;
  const owner: Owner = { pid: process.pid, started };
  for (const profile of await ownProfiles()) {
    // `wx`: a profile keeps its first mark.
    await writeFile(join(profile, OWNER_FILE), JSON.stringify(owner), { flag: 'wx' }).catch(() => {});
  }
}

const isOwner = (value: unknown): value is Owner =>
  typeof value === 'object' &&
  value !== null &&
  Number.isInteger((value as Owner).pid) &&
  typeof (value as Owner).started === 'string';

/** Removes the marked profiles whose process is gone (before a launch); unmarked ones are not ours to touch. */
export async function sweepStaleProfiles(): Promise<void> {
  const root = tmpdir();
  const entries = await readdir(root).catch(() => []);
  for (const entry of entries) {
    if (!entry.startsWith(PROFILE_PREFIX)) continue;
    const profile = join(root, entry);
    let owner: unknown;
    try {
      owner = JSON.parse(await readFile(join(profile, OWNER_FILE), 'utf8'));
    } catch {
      continue;
    }
    if (!isOwner(owner) || startTimeOf(owner.pid) === owner.started) continue;
    await rm(profile, { recursive: true, force: true }).catch(() => {});
  }
}
