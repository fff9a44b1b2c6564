import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { createFileStore } from '../src/shell/fileStore.js';
import { createMemoryStore } from '../src/shell/memoryStore.js';
import type { StoreKind } from './storeContract.js';
import { describeStoreRunsContract } from './storeRunsContract.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'openmanus-store-runs-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const kinds: StoreKind[] = [
  {
    name: 'memory store',
    writers: () => {
      const store = createMemoryStore();
      return () => store;
    },
  },
  { name: 'file store', writers: () => () => createFileStore(join(root, 'runs')) },
];

for (const kind of kinds) describeStoreRunsContract(kind);
