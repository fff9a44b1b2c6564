import { type FileHandle, mkdir, open, readdir, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentState } from '../kernel/state.js';
import { ignoreCode } from './errno.js';
import { withFileLock } from './fileLock.js';
import { runFileName, runIdOf } from './runFileName.js';
import { deltaLine, lineHead, readRunLog, snapshotLine } from './runLog.js';
import { diffState } from './stateDelta.js';
import { CheckpointConflictError, type CheckpointStore, type StoredRun } from './store.js';

/** Below this many bytes of deltas a file is never rewritten, however small its state. */
const COMPACT_MIN_BYTES = 64 * 1024;

/** What this store knows of a run's file, as of the last line it wrote or read. */
interface KnownRun<S extends object = object> {
  /** The state of the last line: the base of the next delta. */
  readonly state: S;
  readonly version: number;
  /** The file's size after the last line. */
  readonly end: number;
  readonly lastLineStart: number;
  /** How the last line starts (its version and unique id): the freshness check reads it back. */
  readonly lastLineHead: Buffer;
  /** Size of the full-state line the deltas after it build on. */
  readonly snapshotBytes: number;
}

/**
 * Runs as append-only JSON-lines files in `directory`, one per run (see runLog.ts). A save
 * appends only what changed since this store's previous save of the run, and rewrites the file
 * as one snapshot once the deltas outweigh it, so its cost stays flat as the run grows.
 *
 * Saves of a run hold a lock file, so writers in several processes can share the directory;
 * each checks that the file still ends with the line it knows, or reads the file again. A
 * lock left by a process that died is broken after a few seconds.
 *
 * A save survives a crash of the process; appends are not flushed to the disk, so a power cut
 * may lose the latest ones (a rewrite is flushed before it replaces the file).
 */
export function openJsonLinesStore<S extends object = AgentState>(directory: string): CheckpointStore<S> {
  const writerId = Buffer.from(crypto.getRandomValues(new Uint8Array(6))).toString('base64url');
  let linesWritten = 0;
  const nextLineId = () => `${writerId}.${(linesWritten++).toString(36)}`;
  // Holds the last state of each run saved or loaded here, until the run is deleted.
  const known = new Map<string, KnownRun<S>>();
  const fileOf = (runId: string) => join(directory, runFileName(runId));
  let directoryMade: Promise<unknown> | undefined;
  // Runs hold what tools returned (file contents, pages): readable by this user only.
  const makeDirectory = () => (directoryMade ??= mkdir(directory, { recursive: true, mode: 0o700 }));

  /**
   * The run as the open file of `size` bytes holds it: the known one when the file still ends
   * with its last line (two syscalls), else read anew.
   */
  async function current(
    handle: FileHandle,
    size: number,
    file: string,
    runId: string,
  ): Promise<KnownRun<S> | undefined> {
    const run = known.get(runId);
    if (run && run.end === size && (await endsWithLine(handle, run))) return run;
    const log = readRunLog(await readBytes(handle, size), file);
    if (!log) return undefined;
    // Bytes only: whether the state can be run is for `resume` to check (it validates the whole state).
    const read = {
      state: log.state as unknown as S,
      version: log.version,
      end: log.end,
      lastLineStart: log.lastLineStart,
      lastLineHead: Buffer.from(lineHead(log.version, log.lastLineId)),
      snapshotBytes: log.snapshotBytes,
    };
    // The state read is the base of the next delta: a caller resuming it shares its fields.
    known.set(runId, read);
    return read;
  }

  async function append(
    handle: FileHandle,
    size: number,
    file: string,
    run: KnownRun<S>,
    state: S,
  ): Promise<KnownRun<S>> {
    const version = run.version + 1;
    const id = nextLineId();
    const line = Buffer.from(deltaLine(version, id, diffState(run.state, state)));
    const deltaBytes = run.end - run.snapshotBytes + line.length;
    // Rewriting once the deltas outweigh the snapshot costs at most a byte per byte appended.
    if (deltaBytes > Math.max(run.snapshotBytes, COMPACT_MIN_BYTES)) return writeSnapshot(file, version, id, state);
    // Bytes past the known end are an append cut short by a crash; the new line replaces them.
    if (size > run.end) await handle.truncate(run.end);
    await writeAt(handle, line, run.end);
    const head = Buffer.from(lineHead(version, id));
    return { ...run, state, version, end: run.end + line.length, lastLineStart: run.end, lastLineHead: head };
  }

  return {
    async save(runId: string, state: S, expectedVersion: number): Promise<number> {
      const file = fileOf(runId);
      await makeDirectory();
      return withFileLock(`${file}.lock`, async () => {
        const handle = await open(file, 'r+').catch(ignoreCode('ENOENT'));
        try {
          const size = handle ? (await handle.stat()).size : 0;
          const run = handle && (await current(handle, size, file, runId));
          const actual = run?.version ?? 0;
          if (actual !== expectedVersion) throw new CheckpointConflictError(runId, expectedVersion, actual);
          const saved =
            handle && run
              ? await append(handle, size, file, run, state)
              : await writeSnapshot(file, 1, nextLineId(), state);
          known.set(runId, saved);
          return saved.version;
        } finally {
          await handle?.close();
        }
      });
    },

    async load(runId: string): Promise<StoredRun<S> | undefined> {
      const file = fileOf(runId);
      const handle = await open(file, 'r').catch(ignoreCode('ENOENT'));
      if (!handle) return undefined;
      try {
        const run = await current(handle, (await handle.stat()).size, file, runId);
        return run && { state: run.state, version: run.version };
      } finally {
        await handle.close();
      }
    },

    async list(): Promise<readonly string[]> {
      const names = (await readdir(directory).catch(ignoreCode('ENOENT'))) ?? [];
      return names.map(runIdOf).filter((runId) => runId !== undefined);
    },

    async delete(runId: string): Promise<void> {
      const file = fileOf(runId);
      await makeDirectory();
      await withFileLock(`${file}.lock`, async () => {
        await unlink(file).catch(ignoreCode('ENOENT'));
        known.delete(runId);
      });
    },
  };
}

/** Does the file hold, where the run's last line starts, the version and id of that line? */
async function endsWithLine(handle: FileHandle, run: KnownRun): Promise<boolean> {
  const head = Buffer.alloc(run.lastLineHead.length);
  const { bytesRead } = await handle.read(head, 0, head.length, run.lastLineStart);
  return bytesRead === head.length && head.equals(run.lastLineHead);
}

/** The file as one snapshot line, replaced atomically (a new file renamed over the old one). */
async function writeSnapshot<S extends object>(
  file: string,
  version: number,
  id: string,
  state: S,
): Promise<KnownRun<S>> {
  const line = Buffer.from(snapshotLine(version, id, state));
  const temporary = `${file}.tmp`;
  const handle = await open(temporary, 'w', 0o600);
  try {
    await writeAt(handle, line, 0);
    // Flushed before the rename, so a power cut cannot leave the run as an empty file.
    await handle.datasync();
  } finally {
    await handle.close();
  }
  await rename(temporary, file);
  const head = Buffer.from(lineHead(version, id));
  return { state, version, end: line.length, lastLineStart: 0, lastLineHead: head, snapshotBytes: line.length };
}

async function writeAt(handle: FileHandle, bytes: Buffer, position: number): Promise<void> {
  for (let written = 0; written < bytes.length; ) {
    const { bytesWritten } = await handle.write(bytes, written, bytes.length - written, position + written);
    written += bytesWritten;
  }
}

/** The first `size` bytes of the file, or fewer if it shrank meanwhile. */
async function readBytes(handle: FileHandle, size: number): Promise<Buffer> {
  const bytes = Buffer.alloc(size);
  let read = 0;
  while (read < size) {
    const { bytesRead } = await handle.read(bytes, read, size - read, read);
    if (bytesRead === 0) break;
    read += bytesRead;
  }
  return bytes.subarray(0, read);
}
