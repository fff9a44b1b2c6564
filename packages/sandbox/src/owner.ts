// Which process made a container: host name, pid and the pid's start time, so that a pid reused
// by a later process is not mistaken for the crashed one.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/** A process's start time (clock ticks since boot, /proc/<pid>/stat field 22), or undefined when it is gone. */
function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Field 3 is the state: a zombie has ended.
    if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
    return fields[19];
  } catch {
    return undefined;
  }
}

/** This process, as written in a container's owner label: `host pid start-time`. */
export const currentOwner = (): string => `${hostname()} ${process.pid} ${startTimeOf(process.pid) ?? '?'}`;

/**
 * Whether the owner label names a process that has ended on this host. Labels of other hosts
 * (a daemon shared by several machines) are never judged.
 */
export function ownerHasEnded(label: string | undefined): boolean {
  const [host, pid, started] = (label ?? '').split(' ');
  if (host !== hostname() || !pid || !/^\d+$/.test(pid)) return false;
  const now = startTimeOf(Number(pid));
  return now === undefined || (started !== '?' && now !== started);
}
