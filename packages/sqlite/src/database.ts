import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

/** The layout of the tables below; kept in the file's `user_version`. */
const SCHEMA_VERSION = 1;

/**
 * `runs`: one row per run, small, rewritten by every save (so it holds no state).
 * `entries`: the run's log, as core's run log lines (snapshotLine, deltaLine): a full state,
 * then one delta per save, until a save compacts them into a new full state.
 */
const SCHEMA = `
  CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    -- The id of the run's newest entry: tells a store whether the state it last saw is still the newest.
    last_entry TEXT NOT NULL,
    status TEXT,
    updated_at INTEGER NOT NULL,
    -- Increases with every save of any run: the order of list(), newest first.
    touched INTEGER NOT NULL,
    snapshot_chars INTEGER NOT NULL,
    delta_chars INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX runs_by_touched ON runs (touched);
  CREATE TABLE entries (
    run_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    line TEXT NOT NULL,
    PRIMARY KEY (run_id, version)
  ) STRICT;
`;

export type SqliteDatabase = Database.Database;

/**
 * Opens (creating it and its directory if need be) a database file in WAL mode: readers never
 * block the writer, and a commit survives the process being killed. A writer waits up to
 * `timeoutMs` for another one (in this process or another) to commit.
 */
export function openDatabase(file: string, timeoutMs: number): SqliteDatabase {
  // Runs hold what tools returned (file contents, pages): readable by this user only. SQLite
  // creates its -wal and -shm files with the database file's permissions.
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  closeSync(openSync(file, 'a', 0o600));
  const db = new Database(file, { timeout: timeoutMs });
  try {
    db.pragma('journal_mode = WAL');
    // In WAL mode a commit is durable against a crash of the process; only a power cut may lose the latest.
    db.pragma('synchronous = NORMAL');
    db.transaction(() => {
      const version = db.pragma('user_version', { simple: true }) as number;
      if (version > SCHEMA_VERSION)
        throw new Error(
          `${file} has checkpoint tables of schema version ${version}, newer than this @openmanus/sqlite reads (${SCHEMA_VERSION})`,
        );
      if (version === SCHEMA_VERSION) return;
      db.exec(SCHEMA);
      db.pragma(`user_version = ${SCHEMA_VERSION}`);
    }).immediate();
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}
