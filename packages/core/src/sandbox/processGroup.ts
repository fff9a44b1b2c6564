import { readdirSync, readFileSync } from 'node:fs';

// A shell's processes, found through /proc: the members of its process group (a non-interactive
// bash runs every command it starts in its own group).

/** The pids of the live processes whose process group is `pgid`. */
export function groupMembers(pgid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // After the command name (which may hold spaces and parentheses): state, ppid, pgrp.
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) === pgid && state !== 'Z' && state !== 'X') found.push(Number(entry));
    } catch {
      // It ended while we looked.
    }
  }
  return found;
}

/** Sends `signal` to a process or (negative pid) a process group, if it is still there. */
export function sendSignal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Gone already.
  }
}
