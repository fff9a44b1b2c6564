import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentState } from '@openmanus/core';
import { userMessage } from '@openmanus/core/kernel';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { grow, started } from '../../core/test/storeContract.js';
import { createSqliteStore, type SqliteStore } from '../src/sqliteStore.js';
import { buildChildren, type Children, startChild } from './children.js';

let root: string;
let file: string;
const opened: { close(): void }[] = [];
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'openmanus-sqlite-'));
  file = join(root, 'data', 'runs.db');
});
afterEach(async () => {
  vi.useRealTimers();
  for (const handle of opened.splice(0)) handle.close();
  await rm(root, { recursive: true, force: true });
});

function open<S extends object = AgentState>(): SqliteStore<S> {
  const store = createSqliteStore<S>({ file });
  opened.push(store);
  return store;
}

/** The database as another program sees it. */
function raw(): Database.Database {
  const db = new Database(file);
  opened.push(db);
  return db;
}
const entriesOf = (runId: string) =>
  raw()
    .prepare<[string], { version: number; line: string }>(
      'SELECT version, line FROM entries WHERE run_id = ? ORDER BY version',
    )
    .all(runId);

describe('the database file', () => {
  it('is created with its directory, in WAL mode', async () => {
    await open().save('run-1', started(), 0);
    expect(await readdir(join(root, 'data'))).toContain('runs.db');
    expect(raw().pragma('journal_mode', { simple: true })).toBe('wal');
  });

  it('is readable by this user only, as are its directory and its write-ahead log', async () => {
    await open().save('run-1', started(), 0);
    expect((await stat(join(root, 'data'))).mode & 0o777).toBe(0o700);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(`${file}-wal`)).mode & 0o777).toBe(0o600);
  });

  it('refuses a file whose tables a newer version of the package wrote', () => {
    open().close();
    raw().pragma('user_version = 2');
    expect(() => createSqliteStore(file)).toThrow(/schema version 2, newer than this @openmanus\/sqlite reads \(1\)/);
  });
});

describe('what a save writes', () => {
  it('appends what changed, not the state', async () => {
    const store = open();
    const long = grow(started(), 1000);
    await store.save('run-1', long, 0);
    const message = userMessage('one more small message');
    const next = { ...long, messages: [...long.messages, message] };
    await store.save('run-1', next, 1);

    const entries = entriesOf('run-1');
    expect(entries.map((e) => e.version)).toEqual([1, 2]);
    const appended = entries[1]?.line.length ?? 0;
    expect(appended).toBeGreaterThan(JSON.stringify(message).length);
    expect(appended).toBeLessThan(JSON.stringify(message).length + 120);
    expect(await open().load('run-1')).toEqual({ state: next, version: 2 });
  });

  it('a fresh store reads the run once and then appends deltas too', async () => {
    await open().save('run-1', grow(started(), 500), 0);
    const store = open();
    const loaded = await store.load('run-1');
    const next = grow(loaded?.state ?? started(), 1);
    await store.save('run-1', next, 1);
    expect(entriesOf('run-1')[1]?.line.length).toBeLessThan(500);
    expect(await open().load('run-1')).toEqual({ state: next, version: 2 });
  });

  it('diffs against the newest state when another writer saved since, not the one it knew', async () => {
    const [a, b] = [open(), open()];
    const base = grow(started(), 2);
    await a.save('run-1', base, 0);
    const fromB = { ...grow(base, 1), answer: 'b was here' };
    await b.save('run-1', fromB, 1);
    // a knows version 1; it must build its delta on b's state, which it reads again.
    const loaded = await a.load('run-1');
    const next = grow(loaded?.state ?? started(), 1);
    await a.save('run-1', next, 2);
    expect(await open().load('run-1')).toEqual({ state: next, version: 3 });
  });

  it('compacts the run into one full state once its deltas outweigh it, keeping each save small', async () => {
    const store = open();
    let state = grow(started(), 10);
    let version = await store.save('run-1', state, 0);
    const big = 'x'.repeat(1000);
    const step = JSON.stringify(grow(state, 1, big).messages.slice(-2)).length;
    const appended: number[] = [];
    while (entriesOf('run-1')[0]?.version === 1) {
      state = grow(state, 1, big);
      version = await store.save('run-1', state, version);
      expect(version).toBeLessThan(500);
      const entries = entriesOf('run-1');
      if (entries.length > 1) appended.push(entries.at(-1)?.line.length ?? 0);
    }
    // Each save before the compaction added about one step, however long the run had grown.
    expect(appended.length).toBeGreaterThan(40);
    expect(Math.max(...appended)).toBeLessThan(step + 200);
    expect(entriesOf('run-1').map((e) => e.version)).toEqual([version]);
    for (let i = 0; i < 3; i++) {
      state = grow(state, 1, big);
      version = await store.save('run-1', state, version);
    }
    expect(entriesOf('run-1').map((e) => e.version)).toEqual([version - 3, version - 2, version - 1, version]);
    expect(await open().load('run-1')).toEqual({ state, version });
  });

  it('keeps what is stored at most about twice the state, however many saves', async () => {
    const store = open();
    let state = grow(started(), 1);
    let version = await store.save('run-1', state, 0);
    for (let i = 0; i < 300; i++) {
      state = grow(state, 1, 'y'.repeat(500));
      version = await store.save('run-1', state, version);
      const stored = entriesOf('run-1').reduce((sum, e) => sum + e.line.length, 0);
      expect(stored).toBeLessThanOrEqual(2 * JSON.stringify(state).length + 64 * 1024 + 1000);
    }
  });

  it('writes a save whole or not at all', async () => {
    const store = open();
    const first = grow(started(), 2);
    await store.save('run-1', first, 0);
    // The run's row cannot be written: the entry written before it in the same transaction must go too.
    raw().exec(`CREATE TRIGGER full BEFORE UPDATE ON runs BEGIN SELECT RAISE(ABORT, 'disk full'); END`);
    await expect(store.save('run-1', grow(first, 1), 1)).rejects.toThrow('disk full');
    expect(entriesOf('run-1').map((e) => e.version)).toEqual([1]);
    expect(await open().load('run-1')).toEqual({ state: first, version: 1 });

    raw().exec('DROP TRIGGER full');
    const second = grow(first, 1);
    expect(await store.save('run-1', second, 1)).toBe(2);
    expect(await open().load('run-1')).toEqual({ state: second, version: 2 });
  });

  it('refuses a damaged run, naming the file and the run', async () => {
    const store = open();
    await store.save('run-1', started(), 0);
    await store.save('run-1', grow(started(), 1), 1);
    raw().prepare("UPDATE entries SET line = 'not json' || char(10) WHERE version = 2").run();
    await expect(open().load('run-1')).rejects.toThrow(`checkpoint file ${file} (run "run-1") is damaged at line 2`);
    raw().prepare('DELETE FROM entries WHERE version = 2').run();
    await expect(open().load('run-1')).rejects.toThrow(
      `checkpoint ${file} (run "run-1") is damaged: its entries end at version 1, not 2`,
    );
  });
});

describe('listing runs', () => {
  it('lists runs newest first: by their last save, not their first', async () => {
    const store = open();
    await store.save('a', started(), 0);
    await store.save('b', started(), 0);
    await store.save('c', started(), 0);
    await store.save('a', grow(started(), 1), 1);
    expect(await open().list()).toEqual(['a', 'c', 'b']);
  });

  it('describes each run: version, last save and status', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const store = open();
    vi.setSystemTime(new Date('2025-01-01T10:00:00Z'));
    await store.save('a', started(), 0);
    vi.setSystemTime(new Date('2025-01-02T10:00:00Z'));
    await store.save('b', started(), 0);
    await store.save('b', { ...grow(started(), 1), status: 'finished', answer: 'done' }, 1);
    expect(await open().listRuns()).toEqual([
      { runId: 'b', version: 2, updatedAt: new Date('2025-01-02T10:00:00Z'), status: 'finished' },
      { runId: 'a', version: 1, updatedAt: new Date('2025-01-01T10:00:00Z'), status: 'awaiting_llm' },
    ]);
  });

  it('keeps states of any shape, and gives no status to one without it', async () => {
    const store = open<{ count: number; status?: number }>();
    await store.save('counter', { count: 1 }, 0);
    await store.save('odd', { count: 1, status: 3 }, 0);
    expect(await store.load('counter')).toEqual({ state: { count: 1 }, version: 1 });
    const runs = await open().listRuns();
    expect(runs.map((run) => 'status' in run)).toEqual([false, false]);
  });
});

describe('pruning', () => {
  /** Runs a (oldest) to e, a day apart; b and d have ended. */
  async function fiveRuns() {
    vi.useFakeTimers({ toFake: ['Date'] });
    const store = open();
    const statuses = { a: 'awaiting_llm', b: 'finished', c: 'awaiting_approval', d: 'failed', e: 'awaiting_llm' };
    for (const [day, [runId, status]] of Object.entries(statuses).entries()) {
      vi.setSystemTime(new Date(Date.UTC(2025, 0, day + 1)));
      await store.save(runId, { ...started(), status } as AgentState, 0);
    }
    return store;
  }

  it('deletes the runs last saved before a date', async () => {
    const store = await fiveRuns();
    expect(await store.prune({ olderThan: new Date(Date.UTC(2025, 0, 3)) })).toEqual(['b', 'a']);
    expect(await open().list()).toEqual(['e', 'd', 'c']);
    expect(await store.load('a')).toBeUndefined();
  });

  it('deletes the runs older than an age in milliseconds', async () => {
    const store = await fiveRuns();
    // Now is Jan 5; older than a day and a half: Jan 1 to 3.
    expect(await store.prune({ olderThan: 36 * 3600_000 })).toEqual(['c', 'b', 'a']);
    expect(await open().list()).toEqual(['e', 'd']);
  });

  it('keeps the newest runs', async () => {
    const store = await fiveRuns();
    expect(await store.prune({ keep: 2 })).toEqual(['c', 'b', 'a']);
    expect(await open().list()).toEqual(['e', 'd']);
    expect(await store.prune({ keep: 2 })).toEqual([]);
  });

  it('only runs that have ended, when asked', async () => {
    const store = await fiveRuns();
    expect(await store.prune({ olderThan: 0, finishedOnly: true })).toEqual(['d', 'b']);
    expect(await open().list()).toEqual(['e', 'c', 'a']);
  });

  it('all criteria together: ended, older than a date, beyond the newest kept', async () => {
    const store = await fiveRuns();
    expect(await store.prune({ keep: 1, olderThan: new Date(Date.UTC(2025, 0, 5)), finishedOnly: true })).toEqual([
      'b',
    ]);
    expect(await open().list()).toEqual(['e', 'd', 'c', 'a']);
  });

  it('a pruned run id can be used again', async () => {
    const store = await fiveRuns();
    await store.prune({ keep: 0 });
    expect(await open().list()).toEqual([]);
    expect(await store.save('a', started('again'), 0)).toBe(1);
    expect(await open().load('a')).toEqual({ state: started('again'), version: 1 });
  });

  it('refuses to prune without a criterion or with a meaningless one, deleting nothing', async () => {
    const store = await fiveRuns();
    await expect(store.prune({})).rejects.toThrow('prune needs olderThan or keep');
    await expect(store.prune({ finishedOnly: true })).rejects.toThrow('prune needs olderThan or keep');
    await expect(store.prune({ keep: -1 })).rejects.toThrow('keep must be a whole number of runs, not -1');
    await expect(store.prune({ keep: 1.5 })).rejects.toThrow('keep must be a whole number');
    await expect(store.prune({ olderThan: new Date('nonsense') })).rejects.toThrow('olderThan must be a date');
    await expect(store.prune({ olderThan: -5 })).rejects.toThrow('olderThan must be a date');
    await expect(store.prune({ olderThan: Number.NaN })).rejects.toThrow('olderThan must be a date');
    expect(await store.list()).toHaveLength(5);
  });
});

describe('writers in other processes', () => {
  let children: Children;
  beforeAll(async () => {
    children = await buildChildren();
  });
  afterAll(() => children.remove());

  /** Starts a child saving the run, ready to go once told. */
  const saver = async (runId: string, marker: string, attempts: number, expected?: number) => {
    const args = [file, runId, marker, String(attempts), ...(expected === undefined ? [] : [String(expected)])];
    const child = startChild(children.script('saveRun'), args);
    await child.line((l) => l === 'ready');
    return async () => {
      child.send('go');
      const line = await child.line((l) => l.startsWith('{'));
      expect(await child.exited).toBe(0);
      return JSON.parse(line) as { saved: string[]; conflicts: number };
    };
  };
  const saveInChild = async (runId: string, marker: string, attempts: number, expected?: number) =>
    (await saver(runId, marker, attempts, expected))();

  it('sees their saves, and refuses one expecting a version another process moved past', async () => {
    const store = open();
    await store.save('run-1', grow(started(), 3), 0);
    expect(await saveInChild('run-1', 'child', 1)).toEqual({ saved: ['child 0'], conflicts: 0 });
    await expect(store.save('run-1', grow(started(), 4), 1)).rejects.toMatchObject({
      name: 'CheckpointConflictError',
      expected: 1,
      actual: 2,
    });
    const loaded = await store.load('run-1');
    expect(loaded?.version).toBe(2);
    expect(loaded?.state.messages.at(-1)).toEqual(userMessage('child 0'));
    expect(await saveInChild('run-1', 'stale', 1, 1)).toEqual({ saved: [], conflicts: 1 });
  });

  it('two processes saving one run at once lose no save: each one they report is in the stored run, in order', async () => {
    await open().save('run-1', started(), 0);
    const [goA, goB] = await Promise.all([saver('run-1', 'a', 100), saver('run-1', 'b', 100)]);
    const [a, b] = await Promise.all([goA(), goB()]);
    expect(a.saved.length + a.conflicts).toBe(100);
    expect(b.saved.length + b.conflicts).toBe(100);
    const stored = await open().load('run-1');
    expect(stored?.version).toBe(1 + a.saved.length + b.saved.length);
    const added = stored?.state.messages.slice(1).map((m) => String(m.content)) ?? [];
    expect(added.filter((m) => m.startsWith('a '))).toEqual(a.saved);
    expect(added.filter((m) => m.startsWith('b '))).toEqual(b.saved);
    expect(added).toHaveLength(a.saved.length + b.saved.length);
  });
});
