// Process-level isolation for python_execute without bubblewrap: a separate uid per call when the
// host runs as root, and reaping every process a call started, however detached.
import { constants as fsConstants, readdirSync, readFileSync, statSync } from 'node:fs';
import { chmod, lchown, lstat, open, readdir, readFile, readlink, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { loadChildProcess as childProcess } from '../lazyModule.js';
import { dropLease, recordLease, recordLent } from './uidLeases.js';

/**
 * Per-call uids (and gids, the same number) come from this range: far above any real account,
 * below 2^31 (which some tools read as negative). One uid per call, never shared with a running
 * process, so "every process of this uid" is exactly "every process this call started".
 */
export const SANDBOX_UID_BASE = 1_800_000_000;
export const SANDBOX_UID_COUNT = 1_000_000;

export const inSandboxRange = (id: number) => id >= SANDBOX_UID_BASE && id < SANDBOX_UID_BASE + SANDBOX_UID_COUNT;

/** Whether this process can run children under the per-call uids: root, with the range mapped. */
export function canSwitchUser(): boolean {
  if (process.getuid?.() !== 0) return false;
  const covers = (file: string) => {
    try {
      return readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .some((line) => {
          const [inside, , count] = line.trim().split(/\s+/).map(Number);
          return (
            inside !== undefined &&
            count !== undefined &&
            inside <= SANDBOX_UID_BASE &&
            inside + count >= SANDBOX_UID_BASE + SANDBOX_UID_COUNT
          );
        });
    } catch {
      return false;
    }
  };
  return covers('/proc/self/uid_map') && covers('/proc/self/gid_map');
}

interface ProcessInfo {
  readonly pid: number;
  readonly uids: readonly number[];
  readonly gids: readonly number[];
  readonly zombie: boolean;
}

function processes(): ProcessInfo[] {
  const found: ProcessInfo[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      const ids = (key: string) =>
        (new RegExp(`^${key}:\\s+(.*)$`, 'm').exec(status)?.[1] ?? '').split(/\s+/).map(Number);
      found.push({
        pid: Number(entry),
        uids: ids('Uid'),
        gids: ids('Gid'),
        zombie: /^State:\s+Z/m.test(status),
      });
    } catch {
      // It ended while we looked.
    }
  }
  return found;
}

/** The uids of the range some live process runs as. */
export function runningSandboxUids(): Set<number> {
  const found = new Set<number>();
  for (const p of processes()) for (const id of p.uids) if (inSandboxRange(id) && !p.zombie) found.add(id);
  return found;
}

const leased = new Set<number>();

/** Picks a uid of the range that no process runs as (real, effective, saved or fs uid or gid). */
export function leaseUid(): { readonly uid: number; release(): void } {
  const used = new Set<number>(leased);
  for (const p of processes()) for (const id of [...p.uids, ...p.gids]) if (inSandboxRange(id)) used.add(id);
  for (;;) {
    const uid = SANDBOX_UID_BASE + Math.floor(Math.random() * SANDBOX_UID_COUNT);
    if (used.has(uid) || !recordLease(uid)) continue;
    leased.add(uid);
    return {
      uid,
      release: () => {
        leased.delete(uid);
        dropLease(uid);
      },
    };
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sleepNow = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

const killPid = (pid: number) => {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Gone already.
  }
};

/**
 * Kills what `round` finds until it finds nothing. The asynchronous form is for the end of a call;
 * the synchronous one for a cancel, where the run moves on as soon as the abort listeners return.
 */
async function reapUntilGone(round: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (!(await round())) return;
    await pause(i < 20 ? 5 : 25);
  }
}
function reapUntilGoneNow(round: () => boolean, deadlineMs = 3000): void {
  const end = Date.now() + deadlineMs;
  while (round() && Date.now() < end) sleepNow(2);
}

/**
 * One round against a per-call uid: `kill -9 -1` run as that uid (the kernel signals every process
 * of the uid in one pass, so a fork loop cannot outrun it), then each process found, by pid. A
 * process that ran a setuid program keeps its real uid, so it is found and killed too. Returns
 * whether any process of the uid was still alive.
 */
function uidRound(uid: number): boolean {
  const left = processes().filter((p) => !p.zombie && p.uids.includes(uid));
  if (left.length === 0) return false;
  try {
    childProcess().spawnSync('kill', ['-9', '-1'], {
      uid,
      gid: uid,
      env: { PATH: '/usr/bin:/bin' },
      stdio: 'ignore',
      timeout: 5000,
    });
  } catch {
    // No kill program: the per-pid kills below still run.
  }
  for (const { pid } of left) killPid(pid);
  return true;
}

/** Kills every process running as `uid` (a per-call uid) and waits until none is left. */
export const reapUid = (uid: number): Promise<void> => reapUntilGone(() => uidRound(uid));
export const reapUidNow = (uid: number): void => reapUntilGoneNow(() => uidRound(uid));

/**
 * The live processes of this process's uid (other than itself) whose environment `matches`,
 * read without blocking: the uid is checked first (the owner of /proc/<pid>, one stat), a few
 * environments are read at a time.
 */
export async function processesWithEnviron(matches: (environ: string) => boolean): Promise<number[]> {
  const uid = process.getuid?.();
  const pids = (await readdir('/proc')).filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid);
  const found: number[] = [];
  const look = async (entry: string) => {
    try {
      if ((await stat(`/proc/${entry}`)).uid !== uid) return;
      if (!matches(await readFile(`/proc/${entry}/environ`, 'latin1'))) return;
      if (/^State:\s+[ZX]/m.test(await readFile(`/proc/${entry}/status`, 'utf8'))) return;
      found.push(Number(entry));
    } catch {
      // Not ours, or ended.
    }
  };
  for (let i = 0; i < pids.length; i += 32) await Promise.all(pids.slice(i, i + 32).map(look));
  return found;
}

/**
 * Same-user mode (not root, no bubblewrap): every process started by the call inherits a marker
 * variable; at the end, processes of this user that still carry it are killed. Code that clears
 * its environment escapes this; only the sandbox or a separate uid hold against hostile code.
 */
async function markedRound(variable: string, token: string): Promise<boolean> {
  const needle = `${variable}=${token}\0`;
  const left = await processesWithEnviron((environ) => environ.includes(needle));
  for (const pid of left) killPid(pid);
  return left.length > 0;
}
/** The same, synchronously, for a cancel (see reapUntilGoneNow). */
function markedRoundNow(variable: string, token: string): boolean {
  const needle = `${variable}=${token}\0`;
  const uid = process.getuid?.();
  let found = false;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (statSync(`/proc/${entry}`).uid !== uid) continue;
      if (!readFileSync(`/proc/${entry}/environ`, 'latin1').includes(needle)) continue;
      if (/^State:\s+[ZX]/m.test(readFileSync(`/proc/${entry}/status`, 'utf8'))) continue;
      found = true;
      killPid(Number(entry));
    } catch {
      // Not ours, or ended.
    }
  }
  return found;
}
export const reapMarked = (variable: string, token: string): Promise<void> =>
  reapUntilGone(() => markedRound(variable, token));
export const reapMarkedNow = (variable: string, token: string): void =>
  reapUntilGoneNow(() => markedRoundNow(variable, token));

/**
 * Visits every entry under `root` (root included) without following symbolic links or crossing
 * into another file system. Only called while no sandboxed process can change the tree.
 */
async function walk(root: string, visit: (path: string, stat: import('node:fs').Stats) => Promise<void>) {
  const top = await lstat(root);
  const dirs: string[] = [root];
  await visit(root, top);
  while (dirs.length > 0) {
    const dir = dirs.pop() as string;
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const path = join(dir, name);
      let stat: import('node:fs').Stats;
      try {
        stat = await lstat(path);
      } catch {
        continue;
      }
      if (stat.dev !== top.dev) continue;
      await visit(path, stat);
      if (stat.isDirectory()) dirs.push(path);
    }
  }
}

type Entry = import('node:fs').Stats;

/**
 * Changes an entry the walk found through a descriptor, and only if that descriptor is the entry
 * (same inode) and lies inside the workspace: a directory swapped for a symbolic link by code
 * running meanwhile (another call on the same workspace) cannot send the change elsewhere.
 * Symbolic links are changed by path (lchown never follows them). Returns false when skipped.
 */
async function change(
  workspace: string,
  path: string,
  stat: Entry,
  apply: { owner?: { uid: number; gid: number }; mode?: number },
): Promise<boolean> {
  if (stat.isSymbolicLink()) {
    if (apply.owner) await lchown(path, apply.owner.uid, apply.owner.gid).catch(() => {});
    return true;
  }
  const flags = fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK;
  const handle = await open(path, flags).catch(() => undefined);
  if (!handle) return false;
  try {
    const opened = await handle.stat();
    if (opened.ino !== stat.ino || opened.dev !== stat.dev) return false;
    const where = await readlink(`/proc/self/fd/${handle.fd}`);
    if (where !== workspace && !where.startsWith(`${workspace}/`)) return false;
    if (apply.owner) await handle.chown(apply.owner.uid, apply.owner.gid);
    if (apply.mode !== undefined) await handle.chmod(apply.mode);
    return true;
  } catch {
    return false;
  } finally {
    await handle.close();
  }
}

/** Setuid and setgid bits off (a file the code wrote must not run as the host). */
const withoutSetuid = (stat: Entry) =>
  stat.isFile() && (stat.mode & 0o6000) !== 0 ? { mode: stat.mode & 0o1777 } : {};

/**
 * Lends the workspace to `uid` for one call: entries owned by this process's uid (or by a per-call
 * uid no process runs as: a call cut short by a crash) become the call's, so the code can write,
 * rename and chmod them. Files with several hard links are left alone: one of the other links may
 * be outside the workspace. Returns the function that gives everything back afterwards (to the
 * owner each had, new entries to this process's uid and gid, setuid and setgid bits removed).
 */
export async function lendWorkspace(workspace: string, uid: number): Promise<() => Promise<void>> {
  const hostUid = process.getuid?.() ?? 0;
  const hostGid = process.getgid?.() ?? 0;
  recordLent(uid, workspace);
  let live: Set<number> | undefined;
  const running = (id: number) => {
    live ??= runningSandboxUids();
    return live.has(id);
  };
  const owners = new Map<number, { uid: number; gid: number }>();
  await walk(workspace, async (path, stat) => {
    if (stat.isSymbolicLink()) return;
    if (!stat.isDirectory() && stat.nlink > 1) return;
    const orphan = inSandboxRange(stat.uid) && stat.uid !== uid && !running(stat.uid);
    if (stat.uid !== hostUid && !orphan) return;
    owners.set(stat.ino, orphan ? { uid: hostUid, gid: hostGid } : { uid: stat.uid, gid: stat.gid });
    await change(workspace, path, stat, { owner: { uid, gid: uid } });
  });
  return async () => {
    await walk(workspace, async (path, stat) => {
      if (stat.uid !== uid) return;
      const owner = owners.get(stat.ino) ?? { uid: hostUid, gid: hostGid };
      await change(workspace, path, stat, { owner, ...withoutSetuid(stat) });
    });
  };
}

/**
 * Strips setuid and setgid bits from regular files in the workspace: code under bubblewrap runs as
 * the host's uid (root when the host is root), and must not leave a program that runs as it.
 */
export async function stripSetuid(workspace: string): Promise<void> {
  const root = process.getuid?.() === 0;
  await walk(workspace, async (path, stat) => {
    const mode = withoutSetuid(stat);
    if (mode.mode === undefined) return;
    // Not root, a file we may not read cannot be opened: by path then (the worst a race can do
    // is take the bits off another file of this same user).
    if (!(await change(workspace, path, stat, mode)) && !root) await chmod(path, mode.mode).catch(() => {});
  });
}

const queues = new Map<string, Promise<unknown>>();
const watchers = new Map<string, Set<() => void>>();

/** Runs `task` after every earlier task for the same key has settled (one lent workspace at a time). */
export function serialized<T>(key: string, task: () => Promise<T>): Promise<T> {
  for (const told of watchers.get(key) ?? []) told();
  const previous = queues.get(key) ?? Promise.resolve();
  const next = previous.then(task, task);
  const tail = next.catch(() => {});
  queues.set(key, tail);
  void tail.then(() => {
    if (queues.get(key) === tail) queues.delete(key);
  });
  return next;
}

/**
 * Resolves when the next task is queued for `key`: a task that may keep the key as long as no
 * one else needs it (a long-lived shell's loan) lets go then.
 */
export function nextQueued(key: string): { readonly queued: Promise<void>; stop(): void } {
  const set = watchers.get(key) ?? new Set<() => void>();
  watchers.set(key, set);
  let told!: () => void;
  const queued = new Promise<void>((resolve) => {
    told = resolve;
  });
  set.add(told);
  return {
    queued,
    stop: () => {
      set.delete(told);
      if (set.size === 0 && watchers.get(key) === set) watchers.delete(key);
    },
  };
}

/** Settles once every task queued so far for `key` has (a lent workspace is given back). */
export const queueSettled = (key: string): Promise<unknown> => queues.get(key) ?? Promise.resolve();

/** The pids whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) found.push(Number(entry));
    } catch {
      // It ended while we looked.
    }
  }
  return found;
}

const alive = (pid: number) => {
  try {
    return !/^State:\s+[ZX]/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
};

/**
 * Under bubblewrap with its own pid namespace: the namespace's first process (a child of
 * bubblewrap) takes every process of the namespace with it when it dies. Kills it and waits until
 * it is gone. Must be called before bubblewrap itself is killed (its child is found through it).
 */
function namespaceRound(inits: readonly number[]): boolean {
  const left = inits.filter(alive);
  for (const pid of left) killPid(pid);
  return left.length > 0;
}
export async function reapNamespace(bwrapPid: number | undefined): Promise<void> {
  if (bwrapPid === undefined) return;
  const inits = childrenOf(bwrapPid);
  await reapUntilGone(() => namespaceRound(inits));
}
export function reapNamespaceNow(bwrapPid: number | undefined): void {
  if (bwrapPid === undefined) return;
  const inits = childrenOf(bwrapPid);
  reapUntilGoneNow(() => namespaceRound(inits));
}
