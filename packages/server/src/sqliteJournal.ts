import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { JournalEntry, RunJournal, RunRecord } from './journal.js';

const SCHEMA_VERSION = 1;
const SCHEMA = `
  CREATE TABLE records (run_id TEXT PRIMARY KEY, record TEXT NOT NULL) STRICT;
  CREATE TABLE entries (
    run_id TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL, at INTEGER NOT NULL, entry TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
  ) STRICT;
`;

/**
 * The runs' records and journals in a SQLite file (WAL): they outlive a restart, so the studio
 * shows a run recovered after a crash whole, and a run's owner stays its owner.
 */
export function createSqliteJournal(file: string): RunJournal {
  // Journals hold what the runs hold (tool outputs, pages): readable by this user only.
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  closeSync(openSync(file, 'a', 0o600));
  const db = new Database(file, { timeout: 5000 });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.transaction(() => {
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > SCHEMA_VERSION)
      throw new Error(`${file} has journal tables of schema version ${version}, newer than this server reads`);
    if (version === SCHEMA_VERSION) return;
    db.exec(SCHEMA);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  })();
  const readRecord = db.prepare<[string], string>('SELECT record FROM records WHERE run_id = ?').pluck();
  const writeRecord = db.prepare<[string, string]>(
    'INSERT INTO records (run_id, record) VALUES (?, ?) ON CONFLICT (run_id) DO UPDATE SET record = excluded.record',
  );
  const addEntry = db.prepare<[{ run: string; kind: string; at: number; entry: string }]>(
    'INSERT INTO entries (run_id, seq, kind, at, entry) ' +
      'VALUES (@run, (SELECT coalesce(max(seq), 0) + 1 FROM entries WHERE run_id = @run), @kind, @at, @entry)',
  );
  const summaryOf = db.prepare<[string], { transitions: number; lastAt: number | null }>(
    "SELECT count(*) FILTER (WHERE kind = 'event') AS transitions, max(at) AS lastAt FROM entries WHERE run_id = ?",
  );
  const readEntries = db.prepare<[string], string>('SELECT entry FROM entries WHERE run_id = ? ORDER BY seq').pluck();
  const deleteRecord = db.prepare<[string]>('DELETE FROM records WHERE run_id = ?');
  const deleteEntries = db.prepare<[string]>('DELETE FROM entries WHERE run_id = ?');
  return {
    record(runId) {
      const text = readRecord.get(runId);
      return text === undefined ? undefined : (JSON.parse(text) as RunRecord);
    },
    setRecord: (runId, record) => void writeRecord.run(runId, JSON.stringify(record)),
    append: (runId, entry) =>
      void addEntry.run({ run: runId, kind: entry.kind, at: entry.at, entry: JSON.stringify(entry) }),
    entries: (runId) => readEntries.all(runId).map((text) => JSON.parse(text) as JournalEntry),
    summary(runId) {
      const row = summaryOf.get(runId);
      return { transitions: row?.transitions ?? 0, ...(row?.lastAt != null ? { lastAt: row.lastAt } : {}) };
    },
    delete: db.transaction((runId: string) => {
      deleteRecord.run(runId);
      deleteEntries.run(runId);
    }),
    close: () => db.close(),
  };
}
