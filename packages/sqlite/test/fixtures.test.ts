// Core's corpus of states saved by released versions, through this store: each is saved as it
// was written (its schemaVersion included), loaded back unchanged, and run to its end from the store.
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type AgentState,
  type AnyEvent,
  createAgent,
  defineTool,
  isFinal,
  type RunOutcome,
  restore,
  resume,
  resumeWith,
  run,
} from '@openmanus/core';
import { SCHEMA_VERSION } from '@openmanus/core/kernel';
import { scriptedLlm } from '@openmanus/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteStore, type SqliteStore } from '../src/sqliteStore.js';

const dir = join(import.meta.dirname, '..', '..', 'core', 'test', 'fixtures');
const saved = readdirSync(dir).filter((f) => f.startsWith('state-v') && f.endsWith('.json'));

let root: string;
const opened: SqliteStore[] = [];
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'openmanus-sqlite-fixtures-'));
});
afterEach(async () => {
  for (const store of opened.splice(0)) store.close();
  await rm(root, { recursive: true, force: true });
});
const open = () => {
  const store = createSqliteStore(join(root, 'runs.db'));
  opened.push(store);
  return store;
};

/** Every tool the fixtures' states call, each answering "ok"; deploy asks for approval as it did. */
const names = [
  'echo',
  'write',
  'deploy',
  'release_manager',
  'researcher',
  'str_replace_editor',
  'ask_human',
  'terminate',
];
const agent = createAgent({
  name: 'fixtures',
  tools: names.map((name) =>
    defineTool({
      name,
      description: `${name}, answering ok`,
      parameters: { type: 'object', properties: {} },
      ...(name === 'deploy' ? { needsApproval: true } : {}),
      execute: () => 'ok',
    }),
  ),
  tokenizer: 'estimate',
});

/** The answer a paused run waits for: a person's reply or an approval. */
function answer(outcome: RunOutcome): AnyEvent | undefined {
  const [input] = outcome.pending;
  if (!input) return undefined;
  return input.kind === 'human'
    ? { type: 'humanReplied', effectId: input.effectId, answer: 'ok' }
    : { type: 'approvalGiven', effectId: input.effectId };
}

describe('saved states of earlier versions, through a SQLite store', () => {
  it('there are fixtures of each released schema version', () => {
    const versions = new Set(saved.map((f) => Number(/^state-v(\d+)-/.exec(f)?.[1])));
    expect([...versions].sort()).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1));
  });

  it.each(saved)('%s is stored as written, restores, and runs to its end from the store', async (file) => {
    const written = JSON.parse(readFileSync(join(dir, file), 'utf8')) as AgentState;
    await open().save(file, written, 0);
    const loaded = await open().load(file);
    expect(loaded).toEqual({ state: written, version: 1 });
    expect(loaded?.state.schemaVersion).toBe(Number(/^state-v(\d+)-/.exec(file)?.[1]));
    expect(await restore(loaded?.state)).toMatchObject({ schemaVersion: SCHEMA_VERSION, status: written.status });

    const store = open();
    const llm = scriptedLlm(() => ({ content: 'finished from fixture' }));
    let outcome = isFinal(written)
      ? await run(agent, 'one more thing', { llm, store, runId: file })
      : await resume(agent, file, { llm, store });
    for (let event = answer(outcome), n = 0; event && n < 5; event = answer(outcome), n++)
      outcome = await resumeWith(agent, file, event, { llm, store });

    expect(outcome).toMatchObject({ status: 'finished', answer: 'finished from fixture' });
    expect(outcome.state.messages.length).toBeGreaterThan(written.messages.length);
    const stored = await open().load(file);
    expect(stored?.state).toEqual(outcome.state);
    // Saved again as the current schema version: what a later release migrates from.
    expect(stored?.state.schemaVersion).toBe(SCHEMA_VERSION);
  });
});
