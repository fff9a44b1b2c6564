// Which process made a container: host name, pid and the pid's start time, so that a pid reused
// by a later process is not mistaken for the crashed one.
import { hostname } from 'node:os';
import { startTimeOf } from '@openmanus/core/internal';

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
