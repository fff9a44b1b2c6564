// A local daemon's container processes, seen from the host's /proc.
import { readdirSync, readFileSync } from 'node:fs';

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
