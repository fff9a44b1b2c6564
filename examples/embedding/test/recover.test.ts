import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CheckpointStore } from '@openmanus/core';
import { scriptedLlm } from '@openmanus/core/testing';
import { createSqliteStore } from '@openmanus/sqlite';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { supportAgent } from '../src/agent.js';
import { createRuns } from '../src/runs.js';

const token = 'test-token-0123456789';
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'embedding-recover-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('resumes, after a restart, a run that stopped mid-step', async () => {
  const file = join(dir, 'runs.db');
  const first = createSqliteStore(file);
  // The "crash": saves stop after the third, as if the process had died there.
  let saves = 0;
  const dying: CheckpointStore = {
    load: (id) => first.load(id),
    list: () => first.list(),
    delete: (id) => first.delete(id),
    save: async (id, state, version) => {
      if (++saves > 3) throw new Error('the process died');
      return first.save(id, state, version);
    },
  };
  const before = createRuns({
    agent: supportAgent,
    llm: scriptedLlm([{ toolCalls: [{ name: 'lookup_order', arguments: { orderId: 'A-1001' } }] }]),
    store: dying,
    token,
    log: () => undefined,
  });
  const { id } = (await before.start({ task: 'Where is order A-1001?' }).json()) as { id: string };
  await before.idle();
  const interrupted = await first.load(id);
  expect(['awaiting_llm', 'awaiting_tools']).toContain(interrupted?.state.status);
  first.close();

  const store = createSqliteStore(file);
  const after = createRuns({
    agent: supportAgent,
    llm: scriptedLlm(() => ({ content: 'Order A-1001 was delivered.' })),
    store,
    token,
  });
  expect(await after.recover()).toEqual([id]);
  await after.idle();
  expect(await (await after.read(id)).json()).toMatchObject({
    status: 'finished',
    answer: 'Order A-1001 was delivered.',
  });
  expect(await after.recover()).toEqual([]);
  store.close();
});
