import { CheckpointConflictError } from '@openmanus/core';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStore, type PostgresStore } from '../src/index.js';
import { type Postgres, startPostgres } from './postgres.js';

let postgres: Postgres;
const stores: PostgresStore<object>[] = [];
const open = () => {
  const store = createPostgresStore<object>({ connectionString: postgres.url('postgres') });
  stores.push(store);
  return store;
};

beforeAll(async () => {
  postgres = await startPostgres();
}, 120_000);
afterAll(async () => {
  for (const store of stores) await store.close();
  await postgres?.stop();
});

describe('createPostgresStore', () => {
  it('saves, loads, lists newest first and deletes, with each save checking the version it expects', async () => {
    const store = open();
    expect(await store.load('none')).toBeUndefined();
    expect(await store.save('a', { status: 'running', n: 1 }, 0)).toBe(1);
    expect(await store.save('b', { status: 'running', n: 1 }, 0)).toBe(1);
    expect(await store.save('a', { status: 'finished', n: 2 }, 1)).toBe(2);
    expect(await store.load('a')).toEqual({ version: 2, state: { status: 'finished', n: 2 } });
    expect((await store.list()).filter((id) => id === 'a' || id === 'b')).toEqual(['a', 'b']);

    const stale = await store.save('a', { n: 3 }, 1).catch((error: unknown) => error);
    expect(stale).toBeInstanceOf(CheckpointConflictError);
    expect(stale).toMatchObject({ runId: 'a', expected: 1, actual: 2 });
    await expect(store.save('b', { n: 0 }, 0)).rejects.toBeInstanceOf(CheckpointConflictError);

    await store.delete('a');
    expect(await store.load('a')).toBeUndefined();
    expect(await store.list()).not.toContain('a');
  });

  it('keeps what jsonb would refuse: a NUL character and other control characters round-trip', async () => {
    const store = open();
    const state = { output: 'before\u0000after\u0007', nested: [{ text: '\u2028' }] };
    await store.save('nul', state, 0);
    expect((await store.load('nul'))?.state).toEqual(state);
  });

  it('lets exactly one of two processes’ saves of the same version win', async () => {
    const [first, second] = [open(), open()];
    await first.save('shared', { n: 0 }, 0);
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => (i % 2 ? first : second).save('shared', { n: i }, 1)),
    );
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    for (const result of results)
      if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(CheckpointConflictError);
    expect((await second.load('shared'))?.version).toBe(2);
  });

  it('outlives its connections being ended under it (a Postgres restart): no crash, the next save reconnects', async () => {
    const broken: Error[] = [];
    const store = createPostgresStore<object>({
      connectionString: postgres.url('postgres'),
      onError: (error) => broken.push(error),
    });
    stores.push(store);
    await store.save('survivor', { n: 1 }, 0);
    // Another connection ends every other one, as a restart of the server would.
    const admin = new pg.Client({ connectionString: postgres.url('postgres') });
    await admin.connect();
    try {
      await admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = current_database()',
      );
    } finally {
      await admin.end();
    }
    await expect.poll(() => broken.length).toBeGreaterThan(0);
    expect(await store.save('survivor', { n: 2 }, 1)).toBe(2);
  });

  it('refuses to be made without a database', () => {
    expect(() => createPostgresStore({})).toThrow(/connectionString or a pool/);
  });
});
