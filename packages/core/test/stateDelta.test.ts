import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { userMessage } from '../src/kernel/messages.js';
import { initialState } from '../src/kernel/reducer.js';
import type { AgentState } from '../src/kernel/state.js';
import { codeOf, ignoreCode } from '../src/shell/errno.js';
import { createFileStore } from '../src/shell/fileStore.js';
import { createMemoryStore } from '../src/shell/memoryStore.js';
import { runFileName, runIdOf } from '../src/shell/runFileName.js';
import { deltaLine, lineHead, readRunLog, snapshotLine } from '../src/shell/runLog.js';
import { applyDelta, diffState, type StateDelta } from '../src/shell/stateDelta.js';

/** What JSON keeps of a value: the bytes a store writes and reads back. */
const json = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe('diffState', () => {
  const a = { id: 'a' };
  const b = { id: 'b' };
  const c = { id: 'c' };

  it('an unchanged key costs nothing, even an array copied with the same elements', () => {
    const messages = [a, b];
    expect(diffState({ status: 'x', messages, n: 1 }, { status: 'x', messages: [...messages], n: 1 })).toEqual({});
  });

  it('a changed value is set', () => {
    expect(diffState({ status: 'running', n: 1 }, { status: 'done', n: 1 })).toEqual({ set: { status: 'done' } });
  });

  it('a new key is set', () => {
    expect(diffState({ n: 1 }, { n: 1, answer: 'yes' })).toEqual({ set: { answer: 'yes' } });
  });

  it('a key that is gone, or set to undefined, is unset', () => {
    expect(diffState({ n: 1, answer: 'yes', error: 'e' }, { n: 1, error: undefined })).toEqual({
      unset: ['error', 'answer'],
    });
  });

  it('a key that was undefined and is now gone changes nothing', () => {
    expect(diffState({ n: 1, answer: undefined }, { n: 1 })).toEqual({});
    expect(diffState({ n: 1 }, { n: 1, answer: undefined })).toEqual({});
  });

  it('a grown array costs its new elements only', () => {
    expect(diffState({ messages: [a] }, { messages: [a, b, c] })).toEqual({
      tail: { messages: { at: 1, items: [b, c] } },
    });
  });

  it('an element replaced inside the array keeps what comes before it', () => {
    const replaced = { id: 'b2' };
    expect(diffState({ messages: [a, b, c] }, { messages: [a, replaced, c] })).toEqual({
      tail: { messages: { at: 1, items: [replaced, c] } },
    });
  });

  it('a shortened array keeps its first elements', () => {
    expect(diffState({ messages: [a, b, c] }, { messages: [a] })).toEqual({ tail: { messages: { at: 1, items: [] } } });
  });

  it('an array with a new first element is set whole', () => {
    expect(diffState({ messages: [a, b] }, { messages: [c, b] })).toEqual({ set: { messages: [c, b] } });
  });

  it('a value that becomes an array, or stops being one, is set', () => {
    expect(diffState({ tools: 'none' }, { tools: [a] })).toEqual({ set: { tools: [a] } });
    expect(diffState({ tools: [a] }, { tools: { a } })).toEqual({ set: { tools: { a } } });
  });

  it('says all three at once', () => {
    expect(diffState({ s: 1, m: [a], gone: true }, { s: 2, m: [a, b] })).toEqual({
      set: { s: 2 },
      tail: { m: { at: 1, items: [b] } },
      unset: ['gone'],
    });
  });
});

describe('applyDelta', () => {
  it('applies set, tail and unset in place', () => {
    const state: Record<string, unknown> = { s: 1, m: ['a', 'b', 'c'], gone: true };
    applyDelta(state, { set: { s: 2, added: 'x' }, tail: { m: { at: 1, items: ['B'] } }, unset: ['gone'] });
    expect(state).toEqual({ s: 2, added: 'x', m: ['a', 'B'] });
  });

  it('an empty delta changes nothing', () => {
    const state = { s: 1, m: [1] };
    applyDelta(state, {});
    expect(state).toEqual({ s: 1, m: [1] });
  });

  it('refuses a tail on what is not an array as long as it keeps', () => {
    expect(() => applyDelta({ m: [1, 2] }, { tail: { m: { at: 3, items: [] } } })).toThrow(
      'cannot keep 3 elements of m: it is not an array that long',
    );
    expect(() => applyDelta({ m: 'text' }, { tail: { m: { at: 0, items: [] } } })).toThrow(
      'cannot keep 0 elements of m: it is not an array that long',
    );
    expect(() => applyDelta({}, { tail: { m: { at: 0, items: [1] } } })).toThrow(/elements of m/);
  });

  it('appends a tail far longer than a call’s argument limit', () => {
    const items = Array.from({ length: 300_000 }, (_, i) => i);
    const state: Record<string, unknown> = { m: [-1] };
    applyDelta(state, { tail: { m: { at: 1, items } } });
    expect((state.m as number[]).length).toBe(300_001);
    expect((state.m as number[]).at(-1)).toBe(299_999);
  });
});

// Random histories of immutable edits, as a reducer makes them: unchanged values are shared.
type Value = { readonly id: number };
type State = Readonly<Record<string, unknown>>;
type Edit =
  | { kind: 'set'; key: string; value: number | string | null }
  | { kind: 'unset'; key: string }
  | { kind: 'undefine'; key: string }
  | { kind: 'append'; key: string; count: number }
  | { kind: 'replaceAt'; key: string; index: number }
  | { kind: 'truncate'; key: string; length: number }
  | { kind: 'replaceArray'; key: string; count: number }
  | { kind: 'copyArray'; key: string }
  | { kind: 'same' };

const keyArb = fc.constantFrom('status', 'step', 'messages', 'tools', 'answer', 'extra');
const editArb: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({
    kind: fc.constant('set' as const),
    key: keyArb,
    value: fc.oneof(fc.integer(), fc.string(), fc.constant(null)),
  }),
  fc.record({ kind: fc.constant('unset' as const), key: keyArb }),
  fc.record({ kind: fc.constant('undefine' as const), key: keyArb }),
  fc.record({ kind: fc.constant('append' as const), key: keyArb, count: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ kind: fc.constant('replaceAt' as const), key: keyArb, index: fc.nat(6) }),
  fc.record({ kind: fc.constant('truncate' as const), key: keyArb, length: fc.nat(6) }),
  fc.record({ kind: fc.constant('replaceArray' as const), key: keyArb, count: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ kind: fc.constant('copyArray' as const), key: keyArb }),
  fc.constant({ kind: 'same' as const }),
);

function edit(state: State, change: Edit, fresh: () => Value): State {
  if (change.kind === 'same') return state;
  const { key } = change;
  const current = state[key];
  const list = Array.isArray(current) ? (current as readonly Value[]) : [];
  switch (change.kind) {
    case 'set':
      return { ...state, [key]: change.value };
    case 'unset': {
      const { [key]: _gone, ...rest } = state;
      return rest;
    }
    case 'undefine':
      return { ...state, [key]: undefined };
    case 'append':
      return { ...state, [key]: [...list, ...Array.from({ length: change.count }, fresh)] };
    case 'replaceAt': {
      if (list.length === 0) return state;
      const copy = [...list];
      copy[change.index % list.length] = fresh();
      return { ...state, [key]: copy };
    }
    case 'truncate':
      return { ...state, [key]: list.slice(0, change.length) };
    case 'replaceArray':
      return { ...state, [key]: Array.from({ length: change.count }, fresh) };
    case 'copyArray':
      return Array.isArray(current) ? { ...state, [key]: [...current] } : state;
  }
}

describe('deltas round trip', () => {
  it('applying the deltas of a history to its first state, through JSON, gives its last state', () => {
    fc.assert(
      fc.property(fc.array(editArb, { maxLength: 30 }), (edits) => {
        let next = 0;
        const fresh = (): Value => ({ id: next++ });
        const first: State = { status: 'idle', step: 0, messages: [fresh(), fresh()] };
        const states = [first];
        for (const change of edits) states.push(edit(states.at(-1) as State, change, fresh));

        const replayed = json(first) as Record<string, unknown>;
        for (let i = 1; i < states.length; i++) {
          const [before, after] = [states[i - 1] as State, states[i] as State];
          const delta = diffState(before, after);
          // Nothing unchanged is written.
          const named = [...Object.keys(delta.set ?? {}), ...Object.keys(delta.tail ?? {}), ...(delta.unset ?? [])];
          for (const key of named) expect(before[key] === after[key] && key in after).toBe(false);
          applyDelta(replayed, json(delta));
          expect(replayed).toEqual(json(after));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a run log of those deltas reads back as the last state, at the last version', () => {
    fc.assert(
      fc.property(fc.array(editArb, { minLength: 1, maxLength: 20 }), (edits) => {
        let next = 0;
        const fresh = (): Value => ({ id: next++ });
        let state: State = { status: 'idle', messages: [fresh()] };
        let bytes = snapshotLine(1, 'line-1', state);
        edits.forEach((change, i) => {
          const after = edit(state, change, fresh);
          bytes += deltaLine(i + 2, `line-${i + 2}`, diffState(state, after));
          state = after;
        });
        const log = readRunLog(Buffer.from(bytes), 'run.jsonl');
        expect(log?.state).toEqual(json(state));
        expect(log?.version).toBe(edits.length + 1);
        expect(log?.lastLineId).toBe(`line-${edits.length + 1}`);
        expect(log?.end).toBe(Buffer.byteLength(bytes));
      }),
      { numRuns: 100 },
    );
  });
});

describe('run log', () => {
  const file = '/runs/run-1.jsonl';
  const read = (text: string) => readRunLog(Buffer.from(text), file);

  it('every line starts with its head, so the freshness check finds it', () => {
    const delta: StateDelta = { set: { a: 1 } };
    expect(snapshotLine(7, 'w.1', { a: 1 }).startsWith(lineHead(7, 'w.1'))).toBe(true);
    expect(deltaLine(8, 'w.2', delta).startsWith(lineHead(8, 'w.2'))).toBe(true);
    expect(lineHead(8, 'w"2')).toBe('{"v":8,"id":"w\\"2"');
    expect(snapshotLine(1, 'x', {}).endsWith('}\n')).toBe(true);
    expect(deltaLine(2, 'y', {})).toBe('{"v":2,"id":"y"}\n');
  });

  it('holds nothing until its first line is complete', () => {
    expect(read('')).toBeUndefined();
    expect(read('{"v":1,"id":"a","full":{"n":1}}')).toBeUndefined();
  });

  it('says where its lines are: the last one, its id, and the snapshot the deltas build on', () => {
    const first = snapshotLine(1, 'a', { n: 1, m: [1] });
    const second = deltaLine(2, 'b', { set: { n: 2 } });
    const third = deltaLine(3, 'c', { tail: { m: { at: 1, items: [2] } } });
    const log = read(`${first}${second}${third}{"v":4,"id":"torn`);
    expect(log).toEqual({
      state: { n: 2, m: [1, 2] },
      version: 3,
      end: first.length + second.length + third.length,
      lastLineStart: first.length + second.length,
      lastLineId: 'c',
      snapshotBytes: first.length,
    });
  });

  it('counts positions in bytes, not characters', () => {
    const first = snapshotLine(1, 'a', { text: 'ü ✓ 日本' });
    const second = deltaLine(2, 'b', { set: { text: '✓✓' } });
    const log = read(first + second);
    expect(log?.lastLineStart).toBe(Buffer.byteLength(first));
    expect(log?.end).toBe(Buffer.byteLength(first + second));
    expect(log?.snapshotBytes).toBe(Buffer.byteLength(first));
  });

  it('a compacted file starts at the version it was compacted at', () => {
    const log = read(snapshotLine(40, 'a', { n: 1 }) + deltaLine(41, 'b', { set: { n: 2 } }));
    expect(log).toMatchObject({ version: 41, state: { n: 2 } });
  });

  it('a later snapshot line replaces the state, and the deltas after it build on it', () => {
    const first = snapshotLine(1, 'a', { n: 1, old: true });
    const second = snapshotLine(2, 'b', { n: 2 });
    const third = deltaLine(3, 'c', { set: { n: 3 } });
    expect(read(first + second + third)).toEqual({
      state: { n: 3 },
      version: 3,
      end: first.length + second.length + third.length,
      lastLineStart: first.length + second.length,
      lastLineId: 'c',
      snapshotBytes: second.length,
    });
  });

  const damaged: [string, string, string][] = [
    ['not JSON', 'oops\n', 'line 1: '],
    ['not an object', '42\n', 'line 1: not a JSON object'],
    ['null', 'null\n', 'line 1: not a JSON object'],
    ['without an id', '{"v":1,"full":{}}\n', 'line 1: no version and id'],
    ['without a version', '{"id":"a","full":{}}\n', 'line 1: no version and id'],
    ['at version 0', '{"v":0,"id":"a","full":{}}\n', 'line 1: version 0 follows 0'],
    ['starting with a delta', '{"v":1,"id":"a","set":{}}\n', 'line 1: the first line holds no full state'],
    [
      'with a full state that is an array',
      '{"v":1,"id":"a","full":[]}\n',
      'line 1: the first line holds no full state',
    ],
  ];
  it.each(damaged)('refuses a first line %s, naming the file and the line', (_what, text, message) => {
    expect(() => read(text)).toThrow(`checkpoint file ${file} is damaged at ${message}`);
  });

  const badDeltas: [string, string, string][] = [
    ['a skipped version', '{"v":3,"id":"b"}', 'version 3 follows 1'],
    ['a repeated version', '{"v":1,"id":"b"}', 'version 1 follows 1'],
    ['a set that is not an object', '{"v":2,"id":"b","set":[1]}', 'set is not an object'],
    ['an unset that is not a list', '{"v":2,"id":"b","unset":"n"}', 'unset is not a list of keys'],
    ['an unset with a number in it', '{"v":2,"id":"b","unset":["n",1]}', 'unset is not a list of keys'],
    ['a tail that is not an object', '{"v":2,"id":"b","tail":[]}', 'tail is not an object'],
    ['a tail entry without items', '{"v":2,"id":"b","tail":{"m":{"at":0}}}', 'a tail entry is not { at, items }'],
    ['a tail entry without at', '{"v":2,"id":"b","tail":{"m":{"items":[]}}}', 'a tail entry is not { at, items }'],
    ['a tail entry that is null', '{"v":2,"id":"b","tail":{"m":null}}', 'a tail entry is not { at, items }'],
    ['a tail longer than its array', '{"v":2,"id":"b","tail":{"m":{"at":5,"items":[]}}}', 'cannot keep 5 elements'],
  ];
  it.each(badDeltas)('refuses a second line with %s', (_what, line, message) => {
    const text = `${snapshotLine(1, 'a', { n: 1, m: [] })}${line}\n`;
    expect(() => read(text)).toThrow(`checkpoint file ${file} is damaged at line 2: ${message}`);
  });

  it('takes a delta with a set, a tail and an unset that are all well formed', () => {
    const text = `${snapshotLine(1, 'a', { n: 1, m: [0], x: 1 })}{"v":2,"id":"b","set":{"n":2},"unset":["x"],"tail":{"m":{"at":1,"items":[1]}}}\n`;
    expect(read(text)?.state).toEqual({ n: 2, m: [0, 1] });
  });
});

describe('run file names', () => {
  it('keeps lower-case letters, digits and _.- as they are', () => {
    expect(runFileName('run-1_a.b')).toBe('run-1_a.b.jsonl');
  });

  it('escapes upper case and every other character, as upper-case %XX', () => {
    expect(runFileName('Run')).toBe('%52un.jsonl');
    expect(runFileName("a!'()*~b")).toBe('a%21%27%28%29%2A%7Eb.jsonl');
    expect(runFileName('a/b\\c')).toBe('a%2Fb%5Cc.jsonl');
    expect(runFileName('ü')).toBe('%C3%BC.jsonl');
    expect(runFileName('%41')).toBe('%2541.jsonl');
    expect(runFileName('..')).toBe('...jsonl');
    expect(runFileName('')).toBe('.jsonl');
  });

  it('reads a run id back from the names it makes, for any id', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (runId) => {
        const name = runFileName(runId);
        expect(name).toMatch(/^(?:[a-z0-9_.-]|%[0-9A-F]{2})*\.jsonl$/);
        expect(runIdOf(name)).toBe(runId);
      }),
      { numRuns: 500 },
    );
  });

  it('refuses names it would not make', () => {
    for (const name of [
      'run-1.json',
      'run-1.jsonl.lock',
      'run-1.jsonl.tmp',
      'Run.jsonl',
      '%2f.jsonl',
      'a!.jsonl',
      '%E0%A4%A.jsonl',
      '%.jsonl',
      'notes.txt',
    ])
      expect(runIdOf(name)).toBeUndefined();
  });
});

describe('errno helpers', () => {
  it('codeOf reads a system error’s code, and nothing from what has none', () => {
    expect(codeOf(Object.assign(new Error('x'), { code: 'ENOENT' }))).toBe('ENOENT');
    expect(codeOf(new Error('x'))).toBeUndefined();
    expect(codeOf(undefined)).toBeUndefined();
  });

  it('ignoreCode turns its code into undefined and rethrows anything else, as it is', () => {
    const missing = Object.assign(new Error('missing'), { code: 'ENOENT' });
    const denied = Object.assign(new Error('denied'), { code: 'EACCES' });
    expect(ignoreCode('ENOENT')(missing)).toBeUndefined();
    expect(() => ignoreCode('ENOENT')(denied)).toThrow(denied);
    expect(() => ignoreCode('ENOENT')('a string')).toThrow('a string');
  });
});

describe('file store edge cases', () => {
  let root: string;
  let dir: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'openmanus-delta-'));
    dir = join(root, 'runs');
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const started = (task: string): AgentState => ({
    ...initialState(),
    status: 'awaiting_llm',
    messages: [userMessage(task)],
  });

  it('lists and loads nothing from a directory that does not exist yet', async () => {
    const store = createFileStore(dir);
    expect(await store.list()).toEqual([]);
    expect(await store.load('run-1')).toBeUndefined();
    await store.delete('run-1');
    expect(await readdir(dir)).toEqual([]);
  });

  it('lists only the runs it wrote, not locks, temporary files or files of other programs', async () => {
    const store = createFileStore(dir);
    await store.save('Run-1', started('a'), 0);
    await writeFile(join(dir, 'notes.txt'), 'x');
    await writeFile(join(dir, 'Run.jsonl'), 'x');
    await writeFile(join(dir, `${runFileName('Run-1')}.lock`), '');
    await writeFile(join(dir, `${runFileName('Run-1')}.tmp`), 'half a snapshot');
    expect(await store.list()).toEqual(['Run-1']);
  });

  it('a list it cannot read is an error, not an empty list', async () => {
    await writeFile(join(root, 'a-file'), 'x');
    const store = createFileStore(join(root, 'a-file'));
    await expect(store.list()).rejects.toMatchObject({ code: 'ENOTDIR' });
  });

  it('a file without a complete line holds no run yet: loads as nothing, and the first save writes it', async () => {
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'run-1.jsonl'), '{"v":1,"id":"crashed","full":{"sta');
    const store = createFileStore(dir);
    expect(await store.load('run-1')).toBeUndefined();
    expect(await store.save('run-1', started('a'), 0)).toBe(1);
    expect(await createFileStore(dir).load('run-1')).toEqual({ state: started('a'), version: 1 });
  });

  it('a temporary file left by a crash mid-rewrite does not get in the way', async () => {
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'run-1.jsonl.tmp'), 'garbage from a crash');
    const store = createFileStore(dir);
    expect(await store.save('run-1', started('a'), 0)).toBe(1);
    expect(await readdir(dir)).toEqual(['run-1.jsonl']);
  });

  it('sees a file another writer replaced with one of exactly the same size', async () => {
    const [a, b] = [createFileStore(dir), createFileStore(dir)];
    await a.save('run-1', started('task a'), 0);
    const before = await readFile(join(dir, 'run-1.jsonl'));
    await b.delete('run-1');
    await b.save('run-1', started('task b'), 0);
    const after = await readFile(join(dir, 'run-1.jsonl'));
    expect(after.length).toBe(before.length);
    expect(after.equals(before)).toBe(false);
    expect(await a.load('run-1')).toEqual({ state: started('task b'), version: 1 });
  });

  it('a torn line longer than the next one is cut away, not left behind it', async () => {
    const store = createFileStore(dir);
    await store.save('run-1', started('a'), 0);
    const file = join(dir, 'run-1.jsonl');
    const clean = await readFile(file, 'utf8');
    await writeFile(file, `${clean}{"v":2,"id":"torn","set":{"note":"${'x'.repeat(5_000)}`);
    const next = { ...started('a'), step: 1 };
    expect(await store.save('run-1', next, 1)).toBe(2);
    const text = await readFile(file, 'utf8');
    expect(text.startsWith(clean)).toBe(true);
    expect(text.endsWith('\n')).toBe(true);
    expect(text.split('\n')).toHaveLength(3);
    expect(text).not.toContain('torn');
    expect(await createFileStore(dir).load('run-1')).toEqual({ state: next, version: 2 });
  });

  it('a save after a load appends a delta to what was loaded', async () => {
    await createFileStore(dir).save('run-1', started('a'), 0);
    const store = createFileStore(dir);
    const loaded = await store.load('run-1');
    const next = { ...(loaded?.state ?? started('x')), step: 1 };
    expect(await store.save('run-1', next, 1)).toBe(2);
    const lines = (await readFile(join(dir, 'run-1.jsonl'), 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[1] ?? '{}')).toMatchObject({ v: 2, set: { step: 1 } });
    expect(JSON.parse(lines[1] ?? '{}')).not.toHaveProperty('full');
  });
});

describe('memory store', () => {
  it('keeps states by reference: a load returns the very state saved', async () => {
    const store = createMemoryStore();
    const state = { ...initialState(), messages: [userMessage('x')] };
    await store.save('run-1', state, 0);
    expect((await store.load('run-1'))?.state).toBe(state);
  });
});
