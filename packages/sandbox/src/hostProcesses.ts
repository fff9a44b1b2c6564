// A local daemon's container processes, seen from the host's /proc.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** The host pids whose environment holds `variable=value` (readable as root, or as their own user). */
export function pidsWithVariable(variable: string, value: string): number[] {
  const needle = `\0${variable}=${value}\0`;
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (`\0${readFileSync(`/proc/${entry}/environ`, 'latin1')}`.includes(needle)) found.push(Number(entry));
    } catch {
      // Not ours to read, or ended.
    }
  }
  return found;
}

/** How many processes of the pid namespace `initPid` is in have died and are not reaped yet (0 when unknown). */
export function unreapedIn(initPid: number): number {
  let namespace: string;
  try {
    namespace = readlinkSync(`/proc/${initPid}/ns/pid`);
  } catch {
    return 0;
  }
  let count = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/ns/pid`) !== namespace) continue;
      if (/^State:\s+Z/m.test(readFileSync(`/proc/${entry}/status`, 'utf8'))) count++;
    } catch {
      // Ended, or not ours to read.
    }
  }
  return count;
}
