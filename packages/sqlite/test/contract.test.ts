// Core's store contract, run against this store: each writer is another connection to the same file.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointConflictError } from '@openmanus/core';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeStoreContract, type StoreKind, started } from '../../core/test/storeContract.js';
import { describeStoreRunsContract } from '../../core/test/storeRunsContract.js';
import { createSqliteStore, type SqliteStore } from '../src/sqliteStore.js';

let root: string;
const opened: SqliteStore[] = [];
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'openmanus-sqlite-contract-'));
});
afterEach(async () => {
  for (const store of opened.splice(0)) store.close();
  await rm(root, { recursive: true, force: true });
});

const writer = (file: string) => {
  const store = createSqliteStore(file);
  opened.push(store);
  return store;
};

const sqlite: StoreKind = { name: 'sqlite store', writers: () => () => writer(join(root, 'runs.db')) };
describeStoreContract(sqlite);
describeStoreRunsContract(sqlite);

it('refuses with the CheckpointConflictError class of @openmanus/core', async () => {
  const store = writer(join(root, 'runs.db'));
  await store.save('run-1', started(), 0);
  await expect(store.save('run-1', started(), 0)).rejects.toBeInstanceOf(CheckpointConflictError);
});
