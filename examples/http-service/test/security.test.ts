import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type CheckpointStore, createManus, createOpenAiLlm } from '@openmanus/core';
import { createSqliteStore } from '@openmanus/sqlite';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createAgentService } from '../src/service.js';
import { finish, onCleanup, raw, setup, TOKEN, tempDir, until } from './helpers.js';

const pythonCall = (id: string, code: string) => ({
  toolCalls: [{ id, name: 'python_execute', arguments: { code } }],
});

/** A run paused on the approval of call `py1`, whose code would write `pwned.txt`. */
async function pausedRun() {
  const service = await setup([pythonCall('py1', 'open("pwned.txt","w").write("x")'), finish('Done.')]);
  const id = String((await service.call('POST', '/runs', { task: 'write a file' })).json.id);
  const paused = (await service.events(id)).at(-1);
  expect(paused).toMatchObject({ type: 'paused' });
  return { ...service, id, effectId: String(paused?.run?.pending?.[0]?.effectId) };
}

describe('the service answers only its own clients', () => {
  it('refuses a request without a valid token (401), for a foreign Host (421), from an Origin (403), or not JSON (415)', async () => {
    const { port, id, effectId, headers, call, workspace, model } = await pausedRun();
    const approve = (h: Record<string, string>) =>
      raw(port, { method: 'POST', path: `/runs/${id}/approve`, headers: h, body: JSON.stringify({ effectId }) });
    const create = (h: Record<string, string>) =>
      raw(port, { method: 'POST', path: '/runs', headers: h, body: '{"task":"rm -rf ~"}' });
    const { authorization: _none, ...noToken } = headers();
    for (const send of [approve, create]) {
      expect((await send(noToken)).status).toBe(401);
      expect((await send(headers({ authorization: 'Bearer not-the-token-0123456789' }))).status).toBe(401);
      expect((await send(headers({ authorization: TOKEN }))).status).toBe(401);
      // DNS rebinding: the browser sends the attacker's host name, even with a token it could not know.
      expect((await send(headers({ host: `attacker.example:${port}` }))).status).toBe(421);
      expect((await send(headers({ host: '127.0.0.1:1' }))).status).toBe(421);
      expect((await send(headers({ origin: 'https://attacker.example' }))).status).toBe(403);
      expect((await send(headers({ origin: `http://127.0.0.1:${port + 1}` }))).status).toBe(403);
      expect((await send(headers({ origin: `http://localhost:${port}` }))).status).toBe(403);
      expect((await send(headers({ origin: 'null' }))).status).toBe(403);
      // The service's own page (its Origin is the Host asked for) still needs the token.
      expect((await send({ ...noToken, origin: `http://127.0.0.1:${port}` })).status).toBe(401);
      // What a page may send without a preflight: text/plain, no credentials, its own host.
      expect((await send(headers({ 'content-type': 'text/plain' }))).status).toBe(415);
      expect((await send(headers({ 'content-type': 'application/x-www-form-urlencoded' }))).status).toBe(415);
      const { 'content-type': _json, ...noType } = headers();
      expect((await send(noType)).status).toBe(415);
      const forged = { ...noToken, host: `attacker.example:${port}`, 'content-type': 'text/plain' };
      expect((await send(forged)).status).toBe(421);
    }
    const { authorization: _t, ...reader } = headers();
    expect((await raw(port, { method: 'GET', path: `/runs/${id}`, headers: reader })).status).toBe(401);
    expect((await raw(port, { method: 'GET', path: `/runs/${id}/events`, headers: reader })).status).toBe(401);

    // None of it had any effect: no run created, the call still waiting, its code never run.
    expect((await call('GET', '/runs')).json.runs).toEqual([{ id, status: 'awaiting_approval', task: 'write a file' }]);
    expect((await call('GET', `/runs/${id}`)).json).toMatchObject({
      status: 'awaiting_approval',
      pending: [{ callId: 'py1' }],
    });
    expect(existsSync(join(workspace, 'pwned.txt'))).toBe(false);
    expect(model.hits).toBe(1);
    // The same request with the token, the host and JSON is the client's own, and goes through,
    // from the service's own page too.
    expect((await approve(headers({ origin: `http://127.0.0.1:${port}` }))).status).toBe(202);
  });

  it('makes a token on first start, keeps it 0600 in the data dir, and keeps it across a restart', async () => {
    const dir = await tempDir();
    const start = () =>
      createAgentService({
        agent: createManus({ workspace: join(dir, 'workspace') }),
        llm: createOpenAiLlm({ model: 'm', apiKey: 'k', baseURL: 'http://127.0.0.1:9/v1' }),
        dataDir: join(dir, 'service'),
      });
    const first = await start();
    onCleanup(() => first.close());
    expect(first.token).toMatchObject({ created: true, file: join(dir, 'service', 'token') });
    expect(first.token.value.length).toBeGreaterThanOrEqual(32);
    expect((await stat(join(dir, 'service', 'token'))).mode & 0o777).toBe(0o600);
    const second = await start();
    onCleanup(() => second.close());
    expect(second.token).toEqual({ ...first.token, created: false });
    const other = await createAgentService({
      agent: createManus({ workspace: join(dir, 'workspace') }),
      llm: createOpenAiLlm({ model: 'm', apiKey: 'k', baseURL: 'http://127.0.0.1:9/v1' }),
      dataDir: await tempDir(),
    });
    onCleanup(() => other.close());
    expect(other.token.value).not.toBe(first.token.value);
  });

  it('answers 413 to a body over the limit without reading it whole, and serves the next request', async () => {
    const { port, headers, call } = await setup([{ content: 'fine' }]);
    const limit = 1024 * 1024;
    const task = (bytes: number) => Buffer.from(JSON.stringify({ task: 'x'.repeat(bytes - 11) }));
    expect(task(limit + 100).length).toBe(limit + 100);
    // Declared: refused from the header.
    const declared = await raw(port, { method: 'POST', path: '/runs', headers: headers(), body: task(limit + 100) });
    expect(declared.status).toBe(413);
    // Chunked, no length: refused once the limit is passed.
    const body = task(limit + 100);
    const chunks = [body.subarray(0, 600_000), body.subarray(600_000)];
    expect((await raw(port, { method: 'POST', path: '/runs', headers: headers(), body: chunks })).status).toBe(413);
    // A length of 600 MB is not waited for.
    const huge = headers({ 'content-length': String(600 * 1024 * 1024) });
    const claimed = raw(port, { method: 'POST', path: '/runs', headers: huge, body: [Buffer.from('{"task":"')] });
    expect((await claimed).status).toBe(413);

    expect((await call('GET', '/runs')).json.runs).toEqual([]);
    const next = await call('POST', '/runs', { task: 'x'.repeat(1000) });
    expect(next.status).toBe(202);
  });
});

function withResolvers(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/**
 * The service on a store whose loads, while `together` runs, wait for each other in pairs: two
 * requests deciding on one run both read it before either records its decision, so only the
 * store's compare-and-set can tell them apart.
 */
async function racing(script: Parameters<typeof setup>[0]) {
  const dir = await tempDir();
  const files = createSqliteStore(join(dir, 'service', 'runs.db'));
  onCleanup(async () => files.close());
  let gate: { loads: number; open: () => void; opened: Promise<void> } | undefined;
  const store: CheckpointStore = {
    ...files,
    async load(runId) {
      const stored = await files.load(runId);
      if (gate && ++gate.loads === 2) gate.open();
      await gate?.opened;
      return stored;
    },
  };
  const service = await setup(script, { dir, store });
  const together = async <T>(work: () => Promise<T>): Promise<T> => {
    const { promise: opened, resolve: open } = withResolvers();
    gate = { loads: 0, open, opened };
    try {
      return await work();
    } finally {
      gate = undefined;
    }
  };
  return { ...service, together };
}

describe('decisions', () => {
  it('of two concurrent approvals of one call, one is recorded (202), the other refused (409); the code runs once', async () => {
    const { call, events, workspace, together } = await racing([
      pythonCall('py1', 'open("count.txt","a").write("ran\\n")'),
      finish('Counted.'),
      finish('Counted again.'),
    ]);
    const id = String((await call('POST', '/runs', { task: 'count' })).json.id);
    const effectId = (await events(id)).at(-1)?.run?.pending?.[0]?.effectId;
    const answers = await together(() =>
      Promise.all([
        call('POST', `/runs/${id}/approve`, { effectId }),
        call('POST', `/runs/${id}/approve`, { effectId }),
      ]),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([202, 409]);
    expect(answers.find((a) => a.status === 409)?.json.error).toBe(`call ${effectId} was decided by another request`);
    await until(async () => (await call('GET', `/runs/${id}`)).json.status === 'finished');
    expect((await call('GET', `/runs/${id}`)).json).toMatchObject({ finishReason: 'terminated', answer: 'Counted.' });
    expect(await readFile(join(workspace, 'count.txt'), 'utf8')).toBe('ran\n');
  });

  it('an approval and a denial at once: only one is recorded', async () => {
    const { call, events, workspace, model, together } = await racing([
      pythonCall('py1', 'open("count.txt","a").write("ran\\n")'),
      finish('Finished.'),
      finish('Finished again.'),
    ]);
    const id = String((await call('POST', '/runs', { task: 'count' })).json.id);
    const effectId = (await events(id)).at(-1)?.run?.pending?.[0]?.effectId;
    const [yes, no] = await together(() =>
      Promise.all([
        call('POST', `/runs/${id}/approve`, { effectId }),
        call('POST', `/runs/${id}/reject`, { effectId, reason: 'no' }),
      ]),
    );
    expect([yes.status, no.status].sort()).toEqual([202, 409]);
    await until(async () => (await call('GET', `/runs/${id}`)).json.status === 'finished');
    expect(model.hits).toBe(2);
    expect(existsSync(join(workspace, 'count.txt'))).toBe(yes.status === 202);
    const told = model.requests[1]?.messages.find((m) => m.role === 'tool')?.content;
    expect(told === 'Error: the user did not approve this call: no').toBe(no.status === 202);
  });

  it('cancelling a paused run records it cancelled: a later approval is refused and the code never runs', async () => {
    const { call, id, effectId, workspace, model } = await pausedRun();
    const cancelled = await call('POST', `/runs/${id}/cancel`, {});
    expect(cancelled).toMatchObject({
      status: 200,
      json: {
        status: 'finished',
        finishReason: 'cancelled',
        error: { code: 'CANCELLED', message: 'cancelled by the client' },
        pending: [],
      },
    });
    expect((await call('POST', `/runs/${id}/approve`, { effectId })).status).toBe(409);
    expect((await call('GET', `/runs/${id}`)).json).toMatchObject({ status: 'finished', finishReason: 'cancelled' });
    expect(existsSync(join(workspace, 'pwned.txt'))).toBe(false);
    expect(model.hits).toBe(1);
  });
});

describe('damaged runs', () => {
  it('are taken out of the store into quarantine with a note; the service starts and serves the other runs', async () => {
    const first = await pausedRun();
    const { dir } = first;
    const file = join(dir, 'service', 'runs.db');
    const store = createSqliteStore(file);
    onCleanup(async () => store.close());
    const good = (await store.load(first.id))?.state as object;
    const damaged = {
      // A state no version of the service wrote, one from a newer version, and one whose log is garbage.
      invalid: ['0b5d7c1e-0000-4000-8000-000000000001', { ...good, status: 'nonsense' }],
      newer: ['0b5d7c1e-0000-4000-8000-000000000002', { ...good, schemaVersion: 999 }],
      garbage: ['0b5d7c1e-0000-4000-8000-000000000003', good],
    } as const;
    for (const [id, state] of Object.values(damaged)) await store.save(id, state as never, 0);
    const db = new Database(file);
    db.prepare('UPDATE entries SET line = ? WHERE run_id = ?').run('\u0000 not json at all\n', damaged.garbage[0]);
    db.close();
    const damagedIds = Object.values(damaged).map(([id]) => id);

    const next = await setup([finish('Done.')], { dir });
    await expect(next.service.recover()).resolves.toEqual([]);
    const listed = (await next.call('GET', '/runs')).json;
    expect(listed.runs).toEqual([{ id: first.id, status: 'awaiting_approval', task: 'write a file' }]);
    const quarantined = listed.quarantined as { id: string; reason: string; file?: string }[];
    expect(quarantined.map((q) => q.id).sort()).toEqual(damagedIds);
    expect(next.logs.filter((line) => line.includes('quarantined'))).toHaveLength(3);
    const aside = join(dir, 'service', 'quarantine');
    const notes = (await readdir(aside)).filter((name) => name.endsWith('.reason.txt'));
    expect(notes).toHaveLength(3);
    for (const { reason } of quarantined) expect(reason).toMatch(/cannot be read/);
    const kept = async (id: string) => {
      const entry = quarantined.find((q) => q.id === id);
      expect(dirname(entry?.file ?? '')).toBe(aside);
      expect(await readFile(`${entry?.file}.reason.txt`, 'utf8')).toContain(`run ${id}\n`);
      return JSON.parse(await readFile(entry?.file ?? '', 'utf8'));
    };
    expect(await kept(damaged.invalid[0])).toMatchObject({ status: 'nonsense' });
    expect(await kept(damaged.newer[0])).toMatchObject({ schemaVersion: 999 });
    expect(quarantined.find((q) => q.id === damaged.garbage[0])?.file).toBeUndefined();
    expect(await store.list()).toEqual([first.id]);

    // The valid run is served and goes on as before.
    expect((await next.call('GET', `/runs/${first.id}`)).json).toMatchObject({ status: 'awaiting_approval' });
    expect((await next.decide(first.id, 'py1')).status).toBe(202);
    await until(async () => (await next.call('GET', `/runs/${first.id}`)).json.status === 'finished');
    expect(await readFile(join(first.workspace, 'pwned.txt'), 'utf8')).toBe('x');
  });
});
