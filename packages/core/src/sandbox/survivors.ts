// What a killed agent left running: processes of its calls that it had no chance to reap (it was
// SIGKILLed, or crashed). The next process that sandboxes anything sweeps them once, as the
// Docker provider removes the containers a dead process left.
import { markAlive, ownMark } from './processOwner.js';
import { canSwitchUser, processesWithEnviron, reapUid } from './reaping.js';
import { removeLeftovers } from './tmpLeftovers.js';
import { dropLease, leaseDir, lentWorkspaces, staleLeases } from './uidLeases.js';

/** Carried by every process of a same-user command (and of a same-user long-lived process). */
export const EXEC_MARKER = 'OPENMANUS_EXEC_CALL';
export const PROCESS_MARKER = 'OPENMANUS_SANDBOX_PROCESS';
const MARKERS = [EXEC_MARKER, PROCESS_MARKER];

/** A marker's value: the process that set it (`pid.start`), then the call. */
export const markerToken = (): string => `${ownMark()}.${crypto.randomUUID()}`;

/** Whether an environment carries a marker naming a process that is gone (one naming none is left alone). */
function orphaned(environ: string): boolean {
  for (const entry of environ.split('\0')) {
    const at = entry.indexOf('=');
    if (at <= 0 || !MARKERS.includes(entry.slice(0, at))) continue;
    const value = entry.slice(at + 1);
    if (/^\d+\.\d+\./.test(value) && !markAlive(value)) return true;
  }
  return false;
}

/** Same-user survivors (and their children, which carry the marker too): killed until none is left. */
async function sweepMarked(): Promise<void> {
  for (let round = 0; round < 50; round++) {
    const left = await processesWithEnviron(orphaned);
    if (left.length === 0) return;
    for (const pid of left) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Per-call uids whose lease file names a process that is gone: their processes are killed, what
 * they left in the shared temporary directories removed (never a workspace they were lent), the
 * lease dropped. A uid with no lease file is left alone: it may be a live process's that keeps
 * none (an older version, or no place for lease files).
 */
async function sweepUids(): Promise<void> {
  if (!leaseDir()) return;
  for (const uid of staleLeases()) {
    await reapUid(uid);
    await removeLeftovers(uid, lentWorkspaces(uid));
    dropLease(uid);
  }
}

let swept: Promise<void> | undefined;

/** Sweeps once per process, before its first sandboxed command or process. */
export function sweepSurvivors(): Promise<void> {
  swept ??= (async () => {
    await sweepMarked();
    if (canSwitchUser()) await sweepUids();
  })().catch(() => {});
  return swept;
}
