// A local daemon's container, seen from the host: its processes are those of its cgroup (never a
// scan of every process of the host), read asynchronously, a bounded number at a time.
import { readFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';

/** Where the host sees one container's processes. */
export interface HostView {
  /** The host pid of the container's first process (docker-init): never stopped, it reaps the rest. */
  readonly initPid: number;
  /** The container's directory of the pids controller (cgroup v1) or of the unified hierarchy (v2). */
  readonly cgroupDir: string;
}

const CGROUP_ROOT = '/sys/fs/cgroup';
/** Files of /proc read at once. */
const READ_BATCH = 32;

const pidsOf = (text: string) => text.split('\n').filter(Boolean).map(Number);

/**
 * The container's cgroup, found from its first process (`/proc/<pid>/cgroup`: the pids
 * controller's line on cgroup v1, the `0::` line on v2), or undefined when this host does not see
 * it (a remote daemon, another pid namespace): it must name the container and list that process.
 */
export async function hostViewOf(initPid: number, containerId: string): Promise<HostView | undefined> {
  try {
    const lines = (await readFile(`/proc/${initPid}/cgroup`, 'utf8')).split('\n');
    const v1 = lines.find((line) => /^\d+:pids:/.test(line));
    const v2 = lines.find((line) => line.startsWith('0::'));
    const cgroupDir = v1
      ? `${CGROUP_ROOT}/pids${v1.slice(v1.indexOf(':/') + 1)}`
      : v2
        ? `${CGROUP_ROOT}${v2.slice(3)}`
        : undefined;
    if (!cgroupDir?.includes(containerId)) return undefined;
    const view = { initPid, cgroupDir };
    return (await processesOf(view)).includes(initPid) ? view : undefined;
  } catch {
    return undefined;
  }
}

/** Every process of the container (thread-group ids), its first one included. */
export const processesOf = async (view: HostView): Promise<number[]> =>
  pidsOf(await readFile(`${view.cgroupDir}/cgroup.procs`, 'utf8'));

/** The container's processes but its first one. */
const othersOf = async (view: HostView) => (await processesOf(view)).filter((pid) => pid !== view.initPid);

/** Those of `pids` whose environment holds one of `entries` (`name=value`; read a batch at a time). */
async function withEntry(pids: readonly number[], entries: readonly string[]): Promise<number[]> {
  const needles = entries.map((entry) => `\0${entry}\0`);
  const found: number[] = [];
  for (let i = 0; i < pids.length; i += READ_BATCH) {
    const batch = pids.slice(i, i + READ_BATCH);
    const environs = await Promise.all(batch.map((pid) => readFile(`/proc/${pid}/environ`, 'latin1').catch(() => '')));
    environs.forEach((environ, n) => {
      if (needles.some((needle) => `\0${environ}`.includes(needle))) found.push(batch[n] as number);
    });
  }
  return found;
}

/** The container's processes (but its first) whose environment holds one of `entries` (`name=value`). */
export async function processesWith(view: HostView, entries: readonly string[]): Promise<number[]> {
  const others = await othersOf(view);
  return others.length === 0 ? [] : withEntry(others, entries);
}

/**
 * Whether processes that died are still waiting for the container's init to reap them: until
 * then they count against its pids limit (`pids.current` counts them; the task list does not).
 */
export async function unreaped(view: HostView): Promise<boolean> {
  try {
    const tasks = await readFile(
      `${view.cgroupDir}/${view.cgroupDir.startsWith(`${CGROUP_ROOT}/pids/`) ? 'tasks' : 'cgroup.threads'}`,
      'utf8',
    );
    const current = Number((await readFile(`${view.cgroupDir}/pids.current`, 'utf8')).trim());
    return current > pidsOf(tasks).length;
  } catch {
    return false;
  }
}

const signal = (pid: number, name: NodeJS.Signals) => {
  try {
    process.kill(pid, name);
  } catch {
    // Ended meanwhile.
  }
};

/** Rounds of stopping before the container is taken as not stoppable. */
const STOP_ROUNDS = 50;

/**
 * Kills the processes of the container whose environment holds one of `entries`, from the host,
 * so that a fork loop cannot outrun it: every process of the container but its init is stopped
 * (SIGSTOP) until a listing shows none that is not — a stopped process forks no more, and as
 * stopping frees no pid, a full pids limit stays full — then the marked ones are killed and the
 * rest continue (SIGCONT). Reading a stopped process's environment is quick; a forking one's
 * waits on its memory map. Says whether none is left.
 */
export async function killMarked(view: HostView, entries: readonly string[]): Promise<boolean> {
  const stopped = new Set<number>();
  const killed: number[] = [];
  try {
    for (let round = 0; round < STOP_ROUNDS; round++) {
      const fresh = (await othersOf(view)).filter((pid) => !stopped.has(pid));
      if (fresh.length === 0) break;
      for (const pid of fresh) {
        signal(pid, 'SIGSTOP');
        stopped.add(pid);
      }
    }
    for (const pid of await withEntry([...stopped], entries)) {
      signal(pid, 'SIGKILL');
      stopped.delete(pid);
      killed.push(pid);
    }
  } finally {
    for (const pid of stopped) signal(pid, 'SIGCONT');
  }
  await gone(view, killed);
  return (await processesWith(view, entries)).length === 0;
}

/** Waits (a few seconds at most) until the killed processes have left the container: a process dies when next scheduled. */
async function gone(view: HostView, killed: readonly number[]): Promise<void> {
  for (let i = 0; i < 150 && killed.length > 0; i++) {
    const left = new Set(await processesOf(view));
    if (!killed.some((pid) => left.has(pid))) return;
    await delay(20, undefined, { ref: false });
  }
}
