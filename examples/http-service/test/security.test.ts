import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CheckpointStore, createFileStore, createManus, createOpenAiLlm } from '@openmanus/core';
import { startOpenAiServer } from '@openmanus/core/testing';
import ts from 'typescript';
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
  expect((await service.events(id)).at(-1)).toMatchObject({ type: 'paused' });
  return { ...service, id };
}

describe('the service answers only its own clients', () => {
  it('refuses a request without a valid token (401), for a foreign Host (421), from an Origin (403), or not JSON (415)', async () => {
    const { port, id, headers, call, workspace, model } = await pausedRun();
    const approve = (h: Record<string, string>) =>
      raw(port, { method: 'POST', path: `/runs/${id}/approvals/py1`, headers: h, body: '{"approved":true}' });
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
      expect((await send(headers({ origin: `http://127.0.0.1:${port}` }))).status).toBe(403);
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
    expect((await call('GET', '/runs')).json.runs).toEqual([{ id, status: 'awaiting_approval' }]);
    expect((await call('GET', `/runs/${id}`)).json).toMatchObject({
      status: 'awaiting_approval',
      pending: [{ callId: 'py1' }],
    });
    expect(existsSync(join(workspace, 'pwned.txt'))).toBe(false);
    expect(model.hits).toBe(1);
    // The same request with the token, the host and JSON is the client's own, and goes through.
    expect((await approve(headers())).status).toBe(202);
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
    expect(first.token).toMatchObject({ created: true, file: join(dir, 'service', 'token') });
    expect(first.token.value.length).toBeGreaterThanOrEqual(32);
    expect((await stat(join(dir, 'service', 'token'))).mode & 0o777).toBe(0o600);
    const second = await start();
    expect(second.token).toEqual({ ...first.token, created: false });
    const other = await createAgentService({
      agent: createManus({ workspace: join(dir, 'workspace') }),
      llm: createOpenAiLlm({ model: 'm', apiKey: 'k', baseURL: 'http://127.0.0.1:9/v1' }),
      dataDir: await tempDir(),
    });
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
  const files = createFileStore(join(dir, 'service', 'runs'));
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
    await events(id);
    const answers = await together(() =>
      Promise.all([
        call('POST', `/runs/${id}/approvals/py1`, { approved: true }),
        call('POST', `/runs/${id}/approvals/py1`, { approved: true }),
      ]),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([202, 409]);
    expect(answers.find((a) => a.status === 409)?.json.error).toBe('call py1 was decided by another request');
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
    await events(id);
    const [yes, no] = await together(() =>
      Promise.all([
        call('POST', `/runs/${id}/approvals/py1`, { approved: true }),
        call('POST', `/runs/${id}/approvals/py1`, { approved: false, reason: 'no' }),
      ]),
    );
    expect([yes.status, no.status].sort()).toEqual([202, 409]);
    await until(async () => (await call('GET', `/runs/${id}`)).json.status === 'finished');
    expect(model.hits).toBe(2);
    expect(existsSync(join(workspace, 'count.txt'))).toBe(yes.status === 202);
    const told = model.requests[1]?.messages.find((m) => m.role === 'tool')?.content;
    expect(told === 'Error: the user did not approve this call: no').toBe(no.status === 202);
  });

  it('DELETE of a paused run cancels it: a later approval is refused and the code never runs', async () => {
    const { call, id, workspace, model } = await pausedRun();
    const cancelled = await call('DELETE', `/runs/${id}`);
    expect(cancelled).toMatchObject({
      status: 200,
      json: { status: 'finished', finishReason: 'cancelled', error: 'cancelled by the client', pending: [] },
    });
    expect((await call('POST', `/runs/${id}/approvals/py1`, { approved: true })).status).toBe(409);
    expect((await call('GET', `/runs/${id}`)).json).toMatchObject({ status: 'finished', finishReason: 'cancelled' });
    expect(existsSync(join(workspace, 'pwned.txt'))).toBe(false);
    expect(model.hits).toBe(1);
  });
});

describe('damaged state files', () => {
  it('are quarantined with a note; the service starts and serves the other runs', async () => {
    const first = await pausedRun();
    const dir = first.dir;
    const runs = join(dir, 'service', 'runs');
    const damaged = {
      // Cut off in its first line, garbage, and a well-formed line holding no valid state.
      truncated: ['0b5d7c1e-0000-4000-8000-000000000001', '{"v":1,"id":"x","full":{"schemaVersion":2,"sta'],
      garbage: ['0b5d7c1e-0000-4000-8000-000000000002', '\u0000\u0001 not json at all\n'],
      invalid: ['0b5d7c1e-0000-4000-8000-000000000003', '{"v":1,"id":"x","full":{"status":"nonsense"}}\n'],
    };
    for (const [id, text] of Object.values(damaged)) await writeFile(join(runs, `${id}.jsonl`), text ?? '');
    const damagedIds = Object.values(damaged).map(([id]) => id);

    const next = await setup([finish('Done.')], { dir });
    await expect(next.service.recover()).resolves.toEqual([]);
    const listed = (await next.call('GET', '/runs')).json;
    expect(listed.runs).toEqual([{ id: first.id, status: 'awaiting_approval' }]);
    const quarantined = listed.quarantined as { id: string; reason: string; file: string }[];
    expect(quarantined.map((q) => q.id).sort()).toEqual(damagedIds);
    expect(next.logs.filter((line) => line.includes('quarantined'))).toHaveLength(3);
    const aside = join(dir, 'service', 'quarantine');
    for (const { id, reason, file } of quarantined) {
      expect(reason).toMatch(/cannot be read|no complete state/);
      expect(dirname(file)).toBe(aside);
      expect(await readFile(`${file}.reason.txt`, 'utf8')).toContain(`run ${id}\n`);
    }
    expect(await readFile(quarantined.find((q) => q.id === damaged.invalid[0])?.file ?? '', 'utf8')).toBe(
      damaged.invalid[1],
    );
    expect((await readdir(runs)).filter((name) => name.endsWith('.jsonl'))).toEqual([`${first.id}.jsonl`]);

    // The valid run is served and goes on as before.
    expect((await next.call('GET', `/runs/${first.id}`)).json).toMatchObject({ status: 'awaiting_approval' });
    expect((await next.call('POST', `/runs/${first.id}/approvals/py1`, { approved: true })).status).toBe(202);
    await until(async () => (await next.call('GET', `/runs/${first.id}`)).json.status === 'finished');
    expect(await readFile(join(first.workspace, 'pwned.txt'), 'utf8')).toBe('x');
  });
});

const here = dirname(fileURLToPath(import.meta.url));

/** The service's sources as plain JavaScript in a directory of their own, for a child process to run. */
async function buildChild(): Promise<string> {
  const out = await tempDir();
  const files = [
    ...(await readdir(join(here, '../src'))).map((name) => `src/${name}`),
    'test/serviceProcess.ts',
  ].filter((file) => file.endsWith('.ts'));
  for (const file of files) {
    const source = await readFile(join(here, '..', file), 'utf8');
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
      fileName: file,
    });
    await mkdir(join(out, dirname(file)), { recursive: true });
    await writeFile(join(out, file.replace(/\.ts$/, '.js')), outputText);
  }
  await writeFile(join(out, 'package.json'), '{"type":"module"}');
  await symlink(join(here, '../node_modules'), join(out, 'node_modules'));
  return join(out, 'test/serviceProcess.js');
}

interface Child {
  readonly process: ChildProcess;
  readonly port: number;
  readonly exited: Promise<unknown>;
  call(method: string, path: string, body?: object): Promise<{ status: number; json: Record<string, unknown> }>;
}

async function startChild(script: string, args: string[], env: Record<string, string> = {}): Promise<Child> {
  const child = spawn(process.execPath, [script, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  onCleanup(async () => {
    child.kill('SIGKILL');
    await exited;
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const port = await new Promise<number>((resolve, reject) => {
    let stdout = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const line = stdout.split('\n').find((l) => l.startsWith('{"port"'));
      if (line) resolve((JSON.parse(line) as { port: number }).port);
    });
    child.on('exit', (code) => reject(new Error(`the service exited (${code}): ${stderr}`)));
  });
  const call = async (method: string, path: string, body?: object) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };
  return { process: child, port, exited, call };
}

describe('a crash during an approved call', () => {
  it('a call that must not be re-run blindly is not run again after a SIGKILL: the model is told instead', async () => {
    const script = await buildChild();
    const model = await startOpenAiServer({
      script: [
        { toolCalls: [{ id: 'd1', name: 'deploy', arguments: { target: 'production' } }] },
        finish('I will check production before deploying again.'),
      ],
    });
    onCleanup(() => model.close());
    const dir = await tempDir();
    const deploys = join(dir, 'deploys.log');
    const args = [join(dir, 'service'), model.baseURL, deploys, TOKEN];
    const lines = async () =>
      existsSync(deploys) ? (await readFile(deploys, 'utf8')).split('\n').filter(Boolean) : [];

    const first = await startChild(script, args, { DEPLOY_HANGS: '1' });
    const id = String((await first.call('POST', '/runs', { task: 'deploy the site' })).json.id);
    await until(async () => (await first.call('GET', `/runs/${id}`)).json.status === 'awaiting_approval');
    expect((await first.call('POST', `/runs/${id}/approvals/d1`, { approved: true })).status).toBe(202);
    await until(async () => (await lines()).length > 0);
    first.process.kill('SIGKILL');
    await first.exited;

    // The same service on the same data dir: it resumes the run, and the deploy is not done twice.
    const second = await startChild(script, args);
    await until(async () => (await second.call('GET', `/runs/${id}`)).json.status === 'finished');
    expect(await lines()).toEqual([expect.stringMatching(new RegExp(`^${id}/\\S+ production$`))]);
    const told = model.requests[1]?.messages.find((m) => m.role === 'tool')?.content;
    expect(told).toMatch(/^Error: deploy was interrupted while it ran .* may or may not have taken effect/);
    expect((await second.call('GET', `/runs/${id}`)).json).toMatchObject({
      finishReason: 'terminated',
      answer: 'I will check production before deploying again.',
    });
  });
});
