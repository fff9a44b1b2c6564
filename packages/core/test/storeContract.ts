// The contract every CheckpointStore keeps, run by core's stores and by stores in other packages
// (a package's test imports this file): each kind names how to reach the same runs again.
import { beforeEach, describe, expect, it } from 'vitest';
import { assistantMessage, type Message, userMessage } from '../src/kernel/messages.js';
import { initialState } from '../src/kernel/reducer.js';
import type { AgentState } from '../src/kernel/state.js';
import type { CheckpointStore } from '../src/shell/store.js';

/** A store under test: each call of `writers()` is a new set of runs, each call of what it returns another writer on them. */
export interface StoreKind {
  readonly name: string;
  readonly writers: () => () => CheckpointStore;
}

const toolMessage = (n: number, content = `result ${n}`): Message => ({
  role: 'tool',
  content,
  toolCallId: `call_${n}`,
  name: 'add',
});

/** The state after `steps` more agent steps: one assistant and one tool message each. */
export function grow(state: AgentState, steps: number, content?: string): AgentState {
  const messages: Message[] = [...state.messages];
  for (let i = 0; i < steps; i++) {
    const n = state.step + i;
    messages.push(
      assistantMessage('', [{ id: `call_${n}`, name: 'add', arguments: `{"a":${n},"b":1}` }]),
      toolMessage(n, content),
    );
  }
  return {
    ...state,
    status: 'awaiting_llm',
    step: state.step + steps,
    messages,
    usage: { ...state.usage, llmCalls: state.usage.llmCalls + steps },
  };
}

export const started = (task = 'add numbers'): AgentState => ({
  ...initialState(),
  status: 'awaiting_llm',
  messages: [userMessage(task)],
});

/** Saves, loads, versions, conflicts, listing and deleting: what `run` and `resume` rely on. */
export function describeStoreContract(kind: StoreKind): void {
  describe(kind.name, () => {
    let writer: () => CheckpointStore;
    beforeEach(() => {
      writer = kind.writers();
    });

    it('loads what it saved, with its version', async () => {
      const store = writer();
      const state = grow(started(), 3);
      expect(await store.save('run-1', state, 0)).toBe(1);
      expect(await store.load('run-1')).toEqual({ state, version: 1 });
      expect(await writer().load('run-1')).toEqual({ state, version: 1 });
      expect(await store.load('never-saved')).toBeUndefined();
    });

    it('counts saves in the version and loads the last state', async () => {
      const store = writer();
      let state = started();
      for (let version = 0; version < 5; version++) {
        state = grow(state, 1);
        expect(await store.save('run-1', state, version)).toBe(version + 1);
      }
      expect(await writer().load('run-1')).toEqual({ state, version: 5 });
    });

    it('refuses a save whose expected version is not the stored one', async () => {
      const store = writer();
      const first = started();
      await store.save('run-1', first, 0);
      for (const expected of [0, 2, 7]) {
        const refused = store.save('run-1', grow(first, 1), expected);
        await expect(refused).rejects.toMatchObject({
          name: 'CheckpointConflictError',
          runId: 'run-1',
          expected,
          actual: 1,
        });
      }
      await expect(store.save('run-2', first, 1)).rejects.toMatchObject({ expected: 1, actual: 0 });
      expect(await store.load('run-1')).toEqual({ state: first, version: 1 });
      expect(await store.load('run-2')).toBeUndefined();
    });

    it('keeps a second writer from overwriting the first', async () => {
      const [a, b] = [writer(), writer()];
      const base = started();
      await a.save('run-1', base, 0);
      const seenByB = await b.load('run-1');
      const fromA = grow(base, 1, 'from a');
      await a.save('run-1', fromA, 1);
      await expect(b.save('run-1', grow(base, 1, 'from b'), seenByB?.version ?? 0)).rejects.toMatchObject({
        expected: 1,
        actual: 2,
      });
      expect(await b.load('run-1')).toEqual({ state: fromA, version: 2 });
    });

    it('lets one of two concurrent first saves through', async () => {
      const [a, b] = [writer(), writer()];
      const results = await Promise.allSettled([
        a.save('run-1', started('from a'), 0),
        b.save('run-1', started('from b'), 0),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toEqual([{ status: 'fulfilled', value: 1 }]);
      expect((await a.load('run-1'))?.version).toBe(1);
    });

    it('lists and deletes runs', async () => {
      const store = writer();
      expect(await store.list()).toEqual([]);
      await store.save('a', started(), 0);
      await store.save('b', started(), 0);
      expect([...(await store.list())].sort()).toEqual(['a', 'b']);
      await store.delete('a');
      await store.delete('not-there');
      expect(await writer().list()).toEqual(['b']);
      expect(await store.load('a')).toBeUndefined();
      expect(await store.save('a', started('again'), 0)).toBe(1);
    });

    it('keeps runs apart whatever their ids', async () => {
      const store = writer();
      const ids = ['../escape', '../../x', 'a/b', '/abs', '..', '.', '', 'Run', 'run', '%41', 'A', 'ü ✓', 'x\\y'];
      for (const [n, runId] of ids.entries()) await store.save(runId, started(`task ${n}`), 0);
      expect([...(await writer().list())].sort()).toEqual([...ids].sort());
      for (const [n, runId] of ids.entries()) {
        expect(await writer().load(runId)).toEqual({ state: started(`task ${n}`), version: 1 });
      }
    });

    it('keeps any top-level field, new or gone, and messages replaced inside the array', async () => {
      const store = writer();
      const base = grow(started(), 4);
      const extended = { ...grow(base, 1), extra: { note: 'a field AgentState may gain' } };
      const messages = [...extended.messages];
      messages[2] = { role: 'user', content: 'an image stripped from an older message' };
      const replaced = { ...extended, messages, answer: 'done' };
      const { extra: _gone, ...withoutExtra } = replaced;
      const states: AgentState[] = [base, extended, replaced, withoutExtra, { ...withoutExtra, answer: undefined }];
      for (const [version, state] of states.entries()) {
        await store.save('run-1', state, version);
        expect(await writer().load('run-1')).toEqual({ state, version: version + 1 });
      }
    });
  });
}
