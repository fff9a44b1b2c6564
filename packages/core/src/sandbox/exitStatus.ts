// How a command ended, read from the status a shell, bubblewrap or Docker passes on: each reports
// a process killed by signal n as the exit code 128 + n, and none can tell it from a program that
// exits with that code itself (which is then read as the signal, the likelier meaning).
import { constants } from 'node:os';

/** How a command ended, as the sandbox port says it: an exit code, or no code and the signal. */
export interface Ending {
  readonly exitCode: number | null;
  readonly signal?: string;
}

const HIGHEST_SIGNAL = 64;

/** The signal's name an exit status of 128 + n stands for, or undefined when it stands for none. */
export function signalOfStatus(status: number | null): string | undefined {
  if (status === null || status <= 128 || status > 128 + HIGHEST_SIGNAL) return undefined;
  const number = status - 128;
  return Object.entries(constants.signals).find(([, n]) => n === number)?.[0] ?? `signal ${number}`;
}

/** An exit status passed on by a shell, bubblewrap or Docker, as the port's ending. */
export function endingOfStatus(status: number | null): Ending {
  const signal = signalOfStatus(status);
  return signal ? { exitCode: null, signal } : { exitCode: status };
}
