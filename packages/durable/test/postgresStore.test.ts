import { CheckpointConflictError } from '@openmanus/core';
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

  it('refuses to be made without a database', () => {
    expect(() => createPostgresStore({})).toThrow(/connectionString or a pool/);
  });
});
