import { spawn } from 'node:child_process';
import { appendFile, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type AgentState,
  assistantMessage,
  CheckpointConflictError,
  type CheckpointStore,
  createFileStore,
  createMemoryStore,
  initialState,
  type Message,
  userMessage,
} from '../src/index.js';

// Each test gets a root directory with the store's directory inside, so escapes would show up.
let root: string;
let dir: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'openmanus-stores-'));
  dir = join(root, 'runs');
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const toolMessage = (n: number, content = `result ${n}`): Message => ({
  role: 'tool',
  content,
  toolCallId: `call_${n}`,
  name: 'add',
});

/** The state after `steps` more agent steps: one assistant and one tool message each. */
function grow(state: AgentState, steps: number, content?: string): AgentState {
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

const started = (task = 'add numbers'): AgentState => ({
  ...initialState(),
  status: 'awaiting_llm',
  messages: [userMessage(task)],
});

const linesOf = async (file: string) => (await readFile(file, 'utf8')).split('\n').filter((line) => line !== '');
const versionsOf = async (file: string) => (await linesOf(file)).map((line) => (JSON.parse(line) as { v: number }).v);
const runFile = (runId: string) => join(dir, `${runId}.jsonl`);

/** How a contract test reaches the store: each call is another writer on the same runs. */
const kinds: { name: string; writers: () => () => CheckpointStore }[] = [
  {
    name: 'memory store',
    writers: () => {
      const store = createMemoryStore();
      return () => store;
    },
  },
  { name: 'file store', writers: () => () => createFileStore(dir) },
];

describe.each(kinds)('$name', ({ writers }) => {
  let writer: () => CheckpointStore;
  beforeEach(() => {
    writer = writers();
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
      await expect(refused).rejects.toBeInstanceOf(CheckpointConflictError);
      await expect(refused).rejects.toMatchObject({ runId: 'run-1', expected, actual: 1 });
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

describe('file store', () => {
  it('keeps every file inside its directory', async () => {
    const store = createFileStore(dir);
    for (const runId of ['../escape', '../../x', 'a/b', '/abs', '..', '.', '']) await store.save(runId, started(), 0);
    expect(await readdir(root)).toEqual(['runs']);
    const files = await readdir(dir, { withFileTypes: true });
    expect(files.every((file) => file.isFile() && file.name.endsWith('.jsonl'))).toBe(true);
    expect(files).toHaveLength(7);
  });

  it('appends what changed, not the state', async () => {
    const store = createFileStore(dir);
    const long = grow(started(), 1000);
    await store.save('run-1', long, 0);
    const before = (await stat(runFile('run-1'))).size;
    const message = userMessage('one more small message');
    const next = { ...long, messages: [...long.messages, message] };
    await store.save('run-1', next, 1);
    const growth = (await stat(runFile('run-1'))).size - before;
    expect(long.messages).toHaveLength(2001);
    expect(growth).toBeGreaterThan(JSON.stringify(message).length);
    expect(growth).toBeLessThan(JSON.stringify(message).length + 100);
    expect(await versionsOf(runFile('run-1'))).toEqual([1, 2]);
    expect(await createFileStore(dir).load('run-1')).toEqual({ state: next, version: 2 });
  });

  it('a fresh store reads the file once and then appends deltas too', async () => {
    await createFileStore(dir).save('run-1', grow(started(), 500), 0);
    const store = createFileStore(dir);
    const loaded = await store.load('run-1');
    const next = grow(loaded?.state ?? started(), 1);
    const before = (await stat(runFile('run-1'))).size;
    await store.save('run-1', next, 1);
    expect((await stat(runFile('run-1'))).size - before).toBeLessThan(500);
    expect(await createFileStore(dir).load('run-1')).toEqual({ state: next, version: 2 });
  });

  it('rewrites the file as one snapshot once the deltas outweigh it, and loads the same state', async () => {
    const store = createFileStore(dir);
    let state = grow(started(), 10);
    let version = await store.save('run-1', state, 0);
    const big = 'x'.repeat(1000);
    while ((await versionsOf(runFile('run-1')))[0] === 1) {
      state = grow(state, 1, big);
      version = await store.save('run-1', state, version);
      expect(version).toBeLessThan(500);
    }
    const versions = await versionsOf(runFile('run-1'));
    expect(versions).toEqual([version]);
    for (let i = 0; i < 3; i++) {
      state = grow(state, 1, big);
      version = await store.save('run-1', state, version);
    }
    expect(await versionsOf(runFile('run-1'))).toEqual([version - 3, version - 2, version - 1, version]);
    expect(await createFileStore(dir).load('run-1')).toEqual({ state, version });
    expect(await readdir(dir)).toEqual(['run-1.jsonl']);
  });

  it('ignores a last line cut short by a crash, and writes over it', async () => {
    const store = createFileStore(dir);
    const first = grow(started(), 2);
    const second = grow(first, 1);
    await store.save('run-1', first, 0);
    await store.save('run-1', second, 1);
    await appendFile(runFile('run-1'), '{"v":3,"id":"crashed","set":{"status":"fini');
    expect(await createFileStore(dir).load('run-1')).toEqual({ state: second, version: 2 });

    // The store that wrote the file sees it changed, reads it again and cuts the torn line.
    const third = grow(second, 1);
    expect(await store.save('run-1', third, 2)).toBe(3);
    expect(await versionsOf(runFile('run-1'))).toEqual([1, 2, 3]);
    expect(await createFileStore(dir).load('run-1')).toEqual({ state: third, version: 3 });
  });

  it('refuses a damaged file, naming it', async () => {
    const store = createFileStore(dir);
    await store.save('run-1', started(), 0);
    await appendFile(runFile('run-1'), 'not json\n{"v":3,"id":"x"}\n');
    await expect(createFileStore(dir).load('run-1')).rejects.toThrow(
      `checkpoint file ${runFile('run-1')} is damaged at line 2`,
    );
  });

  it('writes a correct state after its run was deleted and saved again by another writer', async () => {
    const [a, b] = [createFileStore(dir), createFileStore(dir)];
    const fromA = grow(started('task a'), 2);
    await a.save('run-1', fromA, 0);
    await b.delete('run-1');
    await b.save('run-1', grow(started('task b'), 2), 0);
    const next = grow(fromA, 1);
    expect(await a.save('run-1', next, 1)).toBe(2);
    expect(await createFileStore(dir).load('run-1')).toEqual({ state: next, version: 2 });
  });

  it('waits while another writer holds the lock of the run', async () => {
    const store = createFileStore(dir);
    await store.save('run-1', started(), 0);
    const lock = `${runFile('run-1')}.lock`;
    await writeFile(lock, '');
    let saved = false;
    const saving = store.save('run-1', grow(started(), 1), 1).finally(() => {
      saved = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(saved).toBe(false);
    await rm(lock);
    expect(await saving).toBe(2);
  });

  it('breaks a lock left behind by a writer that died holding it', async () => {
    const store = createFileStore(dir);
    await store.save('run-1', started(), 0);
    const lock = `${runFile('run-1')}.lock`;
    await writeFile(lock, '');
    const minuteAgo = new Date(Date.now() - 60_000);
    await utimes(lock, minuteAgo, minuteAgo);
    expect(await store.save('run-1', grow(started(), 1), 1)).toBe(2);
    expect(await readdir(dir)).toEqual(['run-1.jsonl']);
  });

  it('lets exactly one of two racing stores save each version, with no line lost or repeated', async () => {
    const writers = [createFileStore(dir), createFileStore(dir)].map((store, n) => ({
      store,
      name: `writer ${n}`,
      base: started(),
    }));
    await writers[0]?.store.save('run-1', started(), 0);
    for (let version = 1; version <= 50; version++) {
      const attempts = writers.map((w) => ({ ...w, state: grow(w.base, 1, `${w.name}, round ${version}`) }));
      const results = await Promise.allSettled(attempts.map((a) => a.store.save('run-1', a.state, version)));
      const won = results.flatMap((result, n) => (result.status === 'fulfilled' ? [n] : []));
      expect(won).toHaveLength(1);
      for (const result of results) {
        if (result.status === 'fulfilled') expect(result.value).toBe(version + 1);
        else expect(result.reason).toMatchObject({ name: 'CheckpointConflictError', expected: version });
      }
      const winner = attempts[won[0] ?? 0]?.state ?? started();
      expect(await createFileStore(dir).load('run-1')).toEqual({ state: winner, version: version + 1 });
      // The loser resumes from what the store holds, as a host would after a conflict.
      for (const [n, w] of writers.entries())
        w.base = n === won[0] ? winner : ((await w.store.load('run-1'))?.state ?? started());
    }
    expect(await versionsOf(runFile('run-1'))).toEqual(Array.from({ length: 51 }, (_, i) => i + 1));
    const ids = (await linesOf(runFile('run-1'))).map((line) => (JSON.parse(line) as { id: string }).id);
    expect(new Set(ids).size).toBe(51);
  });

  it('lets one of 100 concurrent saves with the same expected version through', async () => {
    const stores = [createFileStore(dir), createFileStore(dir)];
    const saves = Array.from({ length: 100 }, (_, n) =>
      stores[n % 2]?.save('run-1', started(`attempt ${n}`), 0).then(() => n),
    );
    const results = await Promise.allSettled(saves);
    const won = results.filter((r) => r.status === 'fulfilled');
    expect(won).toHaveLength(1);
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(refused.map((r) => (r.reason as Error).name)).toEqual(Array(99).fill('CheckpointConflictError'));
    const winner = won[0]?.status === 'fulfilled' ? won[0].value : -1;
    expect(await createFileStore(dir).load('run-1')).toEqual({ state: started(`attempt ${winner}`), version: 1 });
    expect(await versionsOf(runFile('run-1'))).toEqual([1]);
  });

  it('sees the saves of a writer in another process', async () => {
    const store = createFileStore(dir);
    const base = grow(started(), 3);
    await store.save('run-1', base, 0);
    await store.save('run-1', grow(base, 1), 1);

    const child = await saveInChild(dir, 'run-1', 2);
    expect(child).toEqual({ version: 3 });
    await expect(store.save('run-1', grow(base, 2), 2)).rejects.toMatchObject({
      name: 'CheckpointConflictError',
      expected: 2,
      actual: 3,
    });
    const loaded = await store.load('run-1');
    expect(loaded?.version).toBe(3);
    expect(loaded?.state.messages.at(-1)).toEqual(userMessage('from the child process'));

    // Both at once: one of them wins.
    const next = loaded?.state ?? started();
    const [ours, theirs] = await Promise.all([
      store.save('run-1', grow(next, 1), 3).then(
        () => 'saved',
        (error: Error) => error.name,
      ),
      saveInChild(dir, 'run-1', 3),
    ]);
    const outcomes = [ours, 'version' in theirs ? 'saved' : theirs.conflict];
    expect(outcomes.sort()).toEqual(['CheckpointConflictError', 'saved']);
    expect((await createFileStore(dir).load('run-1'))?.version).toBe(4);
  });
});

// The child imports the built package, as another program on the same directory would.
const coreDist = new URL('../dist/index.js', import.meta.url).href;

/** Loads the run in a new node process and saves it with one more message, expecting `version`. */
function saveInChild(
  directory: string,
  runId: string,
  version: number,
): Promise<{ version: number } | { conflict: string }> {
  const script = `
    const { createFileStore } = await import(process.argv[1]);
    const [directory, runId, version] = [process.argv[2], process.argv[3], Number(process.argv[4])];
    const store = createFileStore(directory);
    const { state } = await store.load(runId);
    const next = { ...state, messages: [...state.messages, { role: 'user', content: 'from the child process' }] };
    try {
      console.log(JSON.stringify({ version: await store.save(runId, next, version) }));
    } catch (error) {
      console.log(JSON.stringify({ conflict: error.name }));
    }`;
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--input-type=module', '-e', script, coreDist, directory, runId, String(version)],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(JSON.parse(stdout)) : reject(new Error(`child exited ${code}: ${stderr}`)),
    );
  });
}
