import { spawn } from 'node:child_process';
import { appendFile, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { userMessage } from '../src/kernel/messages.js';
import { createFileStore } from '../src/shell/fileStore.js';
import { createMemoryStore } from '../src/shell/memoryStore.js';
import { CheckpointConflictError } from '../src/shell/store.js';
import { describeStoreContract, grow, type StoreKind, started } from './storeContract.js';

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

const linesOf = async (file: string) => (await readFile(file, 'utf8')).split('\n').filter((line) => line !== '');
const versionsOf = async (file: string) => (await linesOf(file)).map((line) => (JSON.parse(line) as { v: number }).v);
const runFile = (runId: string) => join(dir, `${runId}.jsonl`);

const kinds: StoreKind[] = [
  {
    name: 'memory store',
    writers: () => {
      const store = createMemoryStore();
      return () => store;
    },
  },
  { name: 'file store', writers: () => () => createFileStore(dir) },
];

for (const kind of kinds) describeStoreContract(kind);

describe.each(kinds)('$name', ({ writers }) => {
  it('refuses with the CheckpointConflictError class the package exports', async () => {
    const store = writers()();
    await store.save('run-1', started(), 0);
    await expect(store.save('run-1', started(), 0)).rejects.toBeInstanceOf(CheckpointConflictError);
  });
});

describe('file store', () => {
  it('keeps runs readable by this user only (they hold what tools returned)', async () => {
    await createFileStore(dir).save('run-1', started(), 0);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(join(dir, 'run-1.jsonl'))).mode & 0o777).toBe(0o600);
  });

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
    const { mtimeMs } = await stat(lock);
    let savedAt: number | undefined;
    const saving = store.save('run-1', grow(started(), 1), 1).finally(() => {
      savedAt = Date.now();
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Only a lock that has turned stale (5 s, which a slow machine may reach meanwhile) is broken.
    if (savedAt !== undefined) expect(savedAt - mtimeMs).toBeGreaterThanOrEqual(5_000);
    await rm(lock, { force: true });
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
