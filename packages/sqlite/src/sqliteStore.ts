import { randomUUID } from 'node:crypto';
import { type AgentState, CheckpointConflictError, type CheckpointStore, type StoredRun } from '@openmanus/core';
import { deltaLine, diffState, readRunLog, snapshotLine } from '@openmanus/core/internal';
import { openDatabase } from './database.js';
import { FINAL_STATUSES, type PruneOptions, pruneQuery } from './prune.js';

export interface SqliteStoreOptions {
  /** The database file; created, with its directory, if missing. Several stores and processes may share it. */
  readonly file: string;
  /** How long a save waits for another writer of the file to commit (default 5 s). */
  readonly timeoutMs?: number;
}

/** A run as `listRuns` describes it, without loading its state. */
export interface RunSummary {
  readonly runId: string;
  readonly version: number;
  /** When it was last saved. */
  readonly updatedAt: Date;
  /** The state's `status`, when it has one. */
  readonly status?: string;
}

export interface SqliteStore<S extends object = AgentState> extends CheckpointStore<S> {
  /** The runs with their version, last save and status, newest first (as `list`). */
  listRuns(): Promise<readonly RunSummary[]>;
  /** Deletes the runs the options select, in one transaction; resolves with their ids. */
  prune(options: PruneOptions): Promise<readonly string[]>;
  close(): void;
}

/** Below this many characters of deltas a run is never compacted, however small its state. */
const COMPACT_MIN_CHARS = 64 * 1024;
/** How many runs' last states a store keeps to diff the next save against (the others are read again). */
const KNOWN_RUNS = 1000;

interface RunRow {
  readonly version: number;
  readonly last_entry: string;
  readonly snapshot_chars: number;
  readonly delta_chars: number;
}

/** A run's row as a save writes it. */
interface RunWrite {
  readonly id: string;
  readonly version: number;
  readonly entry: string;
  readonly status: string | null;
  readonly now: number;
  readonly snapshot: number;
  readonly deltas: number;
}

interface SummaryRow {
  readonly id: string;
  readonly version: number;
  readonly status: string | null;
  readonly updated_at: number;
}

/** A run's newest state as this store last saved or read it: the base of its next delta. */
interface KnownRun<S> {
  readonly state: S;
  readonly version: number;
  readonly entry: string;
}

/**
 * Runs in a SQLite database file (WAL mode). Each save is one transaction that checks the
 * version and writes, so writers in several processes cannot overwrite each other; it appends
 * only what changed since the run's previous save (core's delta format), and compacts the run
 * into one full state once its deltas outweigh it, so a save costs the same late in a long run
 * as early on.
 */
export function createSqliteStore<S extends object = AgentState>(options: string | SqliteStoreOptions): SqliteStore<S> {
  const { file, timeoutMs = 5000 } = typeof options === 'string' ? { file: options } : options;
  const db = openDatabase(file, timeoutMs);
  const known = new Map<string, KnownRun<S>>();
  const remember = (runId: string, run: KnownRun<S>) => {
    known.delete(runId);
    known.set(runId, run);
    for (const oldest of known.keys()) {
      if (known.size <= KNOWN_RUNS) break;
      known.delete(oldest);
    }
  };

  const runRow = db.prepare<[string], RunRow>(
    'SELECT version, last_entry, snapshot_chars, delta_chars FROM runs WHERE id = ?',
  );
  const linesOf = db.prepare<[string], string>('SELECT line FROM entries WHERE run_id = ? ORDER BY version').pluck();
  const addEntry = db.prepare<[string, number, string]>('INSERT INTO entries (run_id, version, line) VALUES (?, ?, ?)');
  const clearEntries = db.prepare<[string]>('DELETE FROM entries WHERE run_id = ?');
  const writeRun = db.prepare<[RunWrite]>(`
    INSERT INTO runs (id, version, last_entry, status, updated_at, touched, snapshot_chars, delta_chars)
    VALUES (@id, @version, @entry, @status, @now, (SELECT coalesce(max(touched), 0) + 1 FROM runs), @snapshot, @deltas)
    ON CONFLICT (id) DO UPDATE SET
      version = excluded.version, last_entry = excluded.last_entry, status = excluded.status,
      updated_at = excluded.updated_at, touched = excluded.touched,
      snapshot_chars = excluded.snapshot_chars, delta_chars = excluded.delta_chars`);
  const deleteRun = db.prepare<[string]>('DELETE FROM runs WHERE id = ?');
  const newestFirst = db.prepare<[], string>('SELECT id FROM runs ORDER BY touched DESC').pluck();
  const summaries = db.prepare<[], SummaryRow>(
    'SELECT id, version, status, updated_at FROM runs ORDER BY touched DESC',
  );
  const prunable = db
    .prepare<[{ before: number; keep: number; finishedOnly: number }], string>(`
      SELECT id FROM (
        SELECT id, updated_at FROM runs
        WHERE NOT @finishedOnly OR status IN (${FINAL_STATUSES.map((s) => `'${s}'`).join(', ')})
        ORDER BY touched DESC LIMIT -1 OFFSET @keep
      ) WHERE updated_at < @before`)
    .pluck();

  /** The run's newest state: the one known here if no other writer saved since, else replayed from its entries. */
  function newest(runId: string, row: RunRow): KnownRun<S> {
    const run = known.get(runId);
    if (run && run.version === row.version && run.entry === row.last_entry) return run;
    const where = `${file} (run ${JSON.stringify(runId)})`;
    const log = readRunLog(Buffer.from(linesOf.all(runId).join('')), where);
    if (log?.version !== row.version || log.lastLineId !== row.last_entry)
      throw new Error(
        `checkpoint ${where} is damaged: its entries end at version ${log?.version ?? 0}, not ${row.version}`,
      );
    // Bytes only: whether the state can be run is for `resume` to check (it validates the whole state).
    const read = { state: log.state as unknown as S, version: log.version, entry: log.lastLineId };
    remember(runId, read);
    return read;
  }

  /** Writes the run's entry for `version`: a delta from its newest state, or one full state replacing its entries. */
  function writeEntry(runId: string, row: RunRow | undefined, version: number, entry: string, state: S) {
    if (row) {
      const delta = deltaLine(version, entry, diffState(newest(runId, row).state, state));
      const deltas = row.delta_chars + delta.length;
      // Compacting once the deltas outweigh the full state costs at most a character per character appended.
      if (deltas <= Math.max(row.snapshot_chars, COMPACT_MIN_CHARS)) {
        addEntry.run(runId, version, delta);
        return { snapshot: row.snapshot_chars, deltas };
      }
    }
    const line = snapshotLine(version, entry, state);
    clearEntries.run(runId);
    addEntry.run(runId, version, line);
    return { snapshot: line.length, deltas: 0 };
  }

  const save = db.transaction((runId: string, state: S, expectedVersion: number): KnownRun<S> => {
    const row = runRow.get(runId);
    const actual = row?.version ?? 0;
    if (actual !== expectedVersion) throw new CheckpointConflictError(runId, expectedVersion, actual);
    const version = actual + 1;
    const entry = randomUUID();
    const sizes = writeEntry(runId, row, version, entry, state);
    const status = 'status' in state && typeof state.status === 'string' ? state.status : null;
    writeRun.run({ id: runId, version, entry, status, now: Date.now(), ...sizes });
    return { state, version, entry };
  });

  const load = db.transaction((runId: string): KnownRun<S> | undefined => {
    const row = runRow.get(runId);
    return row && newest(runId, row);
  });

  const remove = db.transaction((runIds: readonly string[]) => {
    for (const runId of runIds) {
      clearEntries.run(runId);
      deleteRun.run(runId);
      known.delete(runId);
    }
  });

  const prune = db.transaction((options: PruneOptions): readonly string[] => {
    const { before, keep, finishedOnly } = pruneQuery(options, Date.now());
    const runIds = prunable.all({ before, keep, finishedOnly: finishedOnly ? 1 : 0 });
    remove(runIds);
    return runIds;
  });

  return {
    async save(runId: string, state: S, expectedVersion: number): Promise<number> {
      // Immediate: the transaction takes the write lock before it reads the version it checks.
      const saved = save.immediate(runId, state, expectedVersion);
      remember(runId, saved);
      return saved.version;
    },
    async load(runId: string): Promise<StoredRun<S> | undefined> {
      const run = load(runId);
      return run && { state: run.state, version: run.version };
    },
    async list(): Promise<readonly string[]> {
      return newestFirst.all();
    },
    async listRuns(): Promise<readonly RunSummary[]> {
      return summaries.all().map((row) => ({
        runId: row.id,
        version: row.version,
        updatedAt: new Date(row.updated_at),
        ...(row.status !== null ? { status: row.status } : {}),
      }));
    },
    async delete(runId: string): Promise<void> {
      remove.immediate([runId]);
    },
    async prune(options: PruneOptions): Promise<readonly string[]> {
      return prune.immediate(options);
    },
    close(): void {
      db.close();
      known.clear();
    },
  };
}
