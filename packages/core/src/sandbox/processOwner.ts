// Who started something: a process named by pid and start time, so that a pid the system has
// since given to another process is not taken for it.
import { readFileSync } from 'node:fs';

/** The start time of process `pid` (clock ticks after boot), or undefined when it is gone or a zombie. */
export function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the command name (which may hold spaces and parentheses): state, then field 22 is the start.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
    return fields[19];
  } catch {
    return undefined;
  }
}

let self: string | undefined;

/** This process, as `pid.start`. */
export const ownMark = (): string => {
  self ??= `${process.pid}.${startTimeOf(process.pid) ?? 0}`;
  return self;
};

/** Whether the process a mark (`pid.start`, maybe followed by more) names still runs. */
export function markAlive(mark: string): boolean {
  const [pid, start] = mark.split('.');
  if (!pid || !/^\d+$/.test(pid) || !start) return false;
  return startTimeOf(Number(pid)) === start;
}
