// A server killed mid-run, and a new one over the same data dir: runs resume from their last
// saved transition, and runs whose saved state is damaged are quarantined instead of stopping it.
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { CheckpointStore } from '@openmanus/core';
import { startOpenAiServer } from '@openmanus/core/testing';
import { createSqliteStore } from '@openmanus/sqlite';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { finish, onCleanup, setup, TOKEN, tempDir, until } from './httpHelpers.js';
import { buildChild, startChild } from './serverChild.js';

/** A child server on its own data dir, with the log of what its tools did. */
async function childSetup(script: Parameters<typeof startOpenAiServer>[0]['script']) {
  const program = await buildChild();
  const model = await startOpenAiServer({ script });
  onCleanup(() => model.close());
  const dir = await tempDir();
  const log = join(dir, 'tools.log');
  const args = [join(dir, 'server'), model.baseURL, log, TOKEN];
  const lines = async () => (existsSync(log) ? (await readFile(log, 'utf8')).split('\n').filter(Boolean) : []);
  return { model, lines, start: (env: Record<string, string> = {}) => startChild(program, args, env) };
}

describe('a killed server process, restarted on the same data dir, resumes its runs', () => {
  it('a run killed while the model thinks goes on from its last transition: no tool call is repeated', async () => {
    const { model, lines, start } = await childSetup([
      { content: 'First a note.', toolCalls: [{ id: 'n1', name: 'note', arguments: { text: 'one' } }] },
      // The first process dies while waiting for this reply.
      { content: 'never delivered', delayMs: 30_000 },
      finish('Resumed and done.'),
    ]);
    const first = await start();
    const id = String((await first.call('POST', '/runs', { task: 'take a note' })).json.id);
    await until(() => model.hits === 2);
    first.process.kill('SIGKILL');
    await first.exited;

    const second = await start();
    expect(second.resumed).toEqual([id]);
    await until(async () => (await second.call('GET', `/runs/${id}`)).json.status === 'finished');
    expect((await second.call('GET', `/runs/${id}`)).json).toMatchObject({ answer: 'Resumed and done.' });
    expect(await lines()).toEqual(['note one']);
    expect(model.hits).toBe(3);
    const resent = model.requests[2]?.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(resent).toEqual(['noted: one']);
  });

  it('a call that must not be re-run blindly is not run again after a SIGKILL: the model is told instead', async () => {
    const { model, lines, start } = await childSetup([
      { toolCalls: [{ id: 'd1', name: 'deploy', arguments: { target: 'production' } }] },
      finish('I will check production before deploying again.'),
    ]);
    const first = await start({ DEPLOY_HANGS: '1' });
    const id = String((await first.call('POST', '/runs', { task: 'deploy the site' })).json.id);
    await until(async () => (await first.call('GET', `/runs/${id}`)).json.status === 'awaiting_approval');
    const pending = (await first.call('GET', `/runs/${id}`)).json.pending as { effectId: string }[];
    expect((await first.call('POST', `/runs/${id}/approve`, { effectId: pending[0]?.effectId })).status).toBe(202);
    await until(async () => (await lines()).length > 0);
    first.process.kill('SIGKILL');
    await first.exited;

    // The same server on the same data dir: it resumes the run, and the deploy is not done twice.
    const second = await start();
    await until(async () => (await second.call('GET', `/runs/${id}`)).json.status === 'finished');
    expect(await lines()).toEqual([expect.stringMatching(new RegExp(`^${id}/\\S+ production$`))]);
    const told = model.requests[1]?.messages.find((m) => m.role === 'tool')?.content;
    expect(told).toMatch(/^Error: deploy was interrupted while it ran .* may or may not have taken effect/);
    expect((await second.call('GET', `/runs/${id}`)).json).toMatchObject({
      finishReason: 'terminated',
      answer: 'I will check production before deploying again.',
    });
  });

  it('a run waiting for approval when the server is killed waits on, and is approved on the next one', async () => {
    const { model, lines, start } = await childSetup([
      { toolCalls: [{ id: 'd1', name: 'deploy', arguments: { target: 'staging' } }] },
      finish('Deployed to staging.'),
    ]);
    const first = await start();
    const id = String((await first.call('POST', '/runs', { task: 'deploy the site' })).json.id);
    await until(async () => (await first.call('GET', `/runs/${id}`)).json.status === 'awaiting_approval');
    first.process.kill('SIGKILL');
    await first.exited;

    const second = await start();
    expect(second.resumed).toEqual([]);
    const run = (await second.call('GET', `/runs/${id}`)).json as { pending: { effectId: string }[] };
    expect(run).toMatchObject({ status: 'awaiting_approval', pending: [{ kind: 'approval', tool: 'deploy' }] });
    expect(await lines()).toEqual([]);
    expect((await second.call('POST', `/runs/${id}/approve`, { effectId: run.pending[0]?.effectId })).status).toBe(202);
    await until(async () => (await second.call('GET', `/runs/${id}`)).json.status === 'finished');
    expect(await lines()).toEqual([expect.stringMatching(/ staging$/)]);
    expect(model.hits).toBe(2);
  });
});

describe('a new server on the same store', () => {
  it('resumes an unfinished run without repeating a step', async () => {
    // The first server's store fails right after it saved the state of step 2, as if it died there.
    const dir = await tempDir();
    const files = createSqliteStore(join(dir, 'server', 'runs.db'));
    onCleanup(async () => files.close());
    const dying: CheckpointStore = {
      ...files,
      async save(id, state, expectedVersion) {
        const version = await files.save(id, state, expectedVersion);
        if (state.step === 2 && state.status === 'awaiting_llm') throw new Error('process killed');
        return version;
      },
    };
    const steps = [1, 2, 3].map((n) => ({
      toolCalls: [{ name: 'str_replace_editor', arguments: { command: 'view', path: `/tmp/${n}` } }],
    }));
    const first = await setup([...steps, finish('done')], { dir, store: dying });
    const id = String((await first.call('POST', '/runs', { task: 'look around' })).json.id);
    await first.events(id);
    await first.server.idle();
    expect((await first.call('GET', `/runs/${id}`)).json).toMatchObject({ status: 'awaiting_llm', step: 2 });
    expect(first.model.hits).toBe(1);
    // The host hears why the run stands still.
    expect(first.logs).toContainEqual(
      expect.stringMatching(new RegExp(`run ${id} stopped: .*process killed.*recover`)),
    );

    // Its default store is the same SQLite file: the rest of the script, served by a fresh model.
    const next = await setup([...steps.slice(1), finish('done')], { dir });
    expect(await next.server.recover()).toEqual([id]);
    await next.server.idle();
    expect((await next.call('GET', `/runs/${id}`)).json).toMatchObject({
      status: 'finished',
      finishReason: 'terminated',
      step: 4,
    });
    expect(next.model.hits).toBe(3);
    expect(next.model.requests.map((r) => r.messages.filter((m) => m.role === 'tool').length)).toEqual([1, 2, 3]);
  });

  it('takes damaged runs out of the store into quarantine with a note, and serves the other runs', async () => {
    const first = await setup([
      { toolCalls: [{ id: 'py1', name: 'python_execute', arguments: { code: 'open("ok.txt","w").write("x")' } }] },
      finish('Done.'),
    ]);
    const id = String((await first.call('POST', '/runs', { task: 'write a file' })).json.id);
    expect((await first.events(id)).at(-1)).toMatchObject({ type: 'paused' });
    const { dir, dataDir } = first;
    const file = join(dataDir, 'runs.db');
    const store = createSqliteStore(file);
    onCleanup(async () => store.close());
    const good = (await store.load(id))?.state as object;
    const damaged = {
      // A state no version wrote, one from a newer version, and one whose log is garbage.
      invalid: ['0b5d7c1e-0000-4000-8000-000000000001', { ...good, status: 'nonsense' }],
      newer: ['0b5d7c1e-0000-4000-8000-000000000002', { ...good, schemaVersion: 999 }],
      garbage: ['0b5d7c1e-0000-4000-8000-000000000003', good],
    } as const;
    for (const [damagedId, state] of Object.values(damaged)) await store.save(damagedId, state as never, 0);
    const db = new Database(file);
    db.prepare('UPDATE entries SET line = ? WHERE run_id = ?').run('\u0000 not json at all\n', damaged.garbage[0]);
    db.close();
    const damagedIds = Object.values(damaged).map(([damagedId]) => damagedId);

    const next = await setup([finish('Done.')], { dir });
    await expect(next.server.recover()).resolves.toEqual([]);
    const listed = await next.listed();
    expect(listed.runs).toEqual([{ id, status: 'awaiting_approval', task: 'write a file' }]);
    const { quarantined } = listed;
    expect(quarantined.map((q) => q.id).sort()).toEqual(damagedIds);
    expect(
      next.server
        .quarantined()
        .map((q) => q.id)
        .sort(),
    ).toEqual(damagedIds);
    expect(next.logs.filter((line) => line.includes('quarantined'))).toHaveLength(3);
    const aside = join(dataDir, 'quarantine');
    expect((await readdir(aside)).filter((name) => name.endsWith('.reason.txt'))).toHaveLength(3);
    for (const { reason } of quarantined) expect(reason).toMatch(/cannot be read/);
    const kept = async (damagedId: string) => {
      const entry = quarantined.find((q) => q.id === damagedId);
      expect(dirname(entry?.file ?? '')).toBe(aside);
      expect(await readFile(`${entry?.file}.reason.txt`, 'utf8')).toContain(`run ${damagedId}\n`);
      return JSON.parse(await readFile(entry?.file ?? '', 'utf8'));
    };
    expect(await kept(damaged.invalid[0])).toMatchObject({ status: 'nonsense' });
    expect(await kept(damaged.newer[0])).toMatchObject({ schemaVersion: 999 });
    expect(quarantined.find((q) => q.id === damaged.garbage[0])?.file).toBeUndefined();
    expect(await store.list()).toEqual([id]);

    // The valid run is served and goes on as before.
    expect((await next.call('GET', `/runs/${id}`)).json).toMatchObject({ status: 'awaiting_approval' });
    expect((await next.decide(id, 'py1')).status).toBe(202);
    await until(async () => (await next.call('GET', `/runs/${id}`)).json.status === 'finished');
    expect(await readFile(join(first.workspace, 'ok.txt'), 'utf8')).toBe('x');
  });
});
