// Everything another site's page or a client without the token can try against the server, over
// real HTTP and from real Chromium pages; and decisions that race on one run.
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type CheckpointStore, createAgent } from '@openmanus/core';
import { scriptedLlm } from '@openmanus/core/testing';
import { createSqliteStore } from '@openmanus/sqlite';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from '../src/index.js';
import { launchChromium } from './chromium.js';
import { finish, onCleanup, raw, setup, TOKEN, tempDir, until } from './httpHelpers.js';

/** A name Chromium resolves to 127.0.0.1: what a DNS-rebound attacker's site looks like to the browser. */
const REBOUND = 'rebound.attacker.test';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium(`--host-resolver-rules=MAP ${REBOUND} 127.0.0.1`);
});
afterAll(async () => {
  await browser?.close();
});

const pythonCall = (id: string, code: string) => ({
  toolCalls: [{ id, name: 'python_execute', arguments: { code } }],
});

/** A run paused on the approval of call `py1`, whose code would write `pwned.txt`. */
async function pausedRun(port?: number) {
  const served = await setup([pythonCall('py1', 'open("pwned.txt","w").write("x")'), finish('Done.')], {
    ...(port ? { port } : {}),
  });
  const id = String((await served.call('POST', '/runs', { task: 'write a file' })).json.id);
  const paused = (await served.events(id)).at(-1);
  expect(paused).toMatchObject({ type: 'paused' });
  return { ...served, id, effectId: String(paused?.run?.pending?.[0]?.effectId) };
}

/** Nothing happened to the paused run: no other run, the call still waiting, its code never run. */
async function untouched({ listed, call, id, workspace, model }: Awaited<ReturnType<typeof pausedRun>>) {
  expect((await listed()).runs).toEqual([{ id, status: 'awaiting_approval', task: 'write a file' }]);
  expect((await call('GET', `/runs/${id}`)).json).toMatchObject({
    status: 'awaiting_approval',
    pending: [{ callId: 'py1' }],
  });
  expect(existsSync(join(workspace, 'pwned.txt'))).toBe(false);
  expect(model.hits).toBe(1);
}

/** Serves `html` on 127.0.0.1 at a free port; `close` stops it and cuts its connections. */
async function serveHtml(html: string) {
  const server = createHttpServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(html));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  onCleanup(async () => {
    if (server.listening) await close();
  });
  return { port: (server.address() as AddressInfo).port, close };
}

/** Serves `html` at `http://localhost:<port>/`: another origin than the server's 127.0.0.1 (and another port). */
async function site(html: string): Promise<string> {
  return `http://localhost:${(await serveHtml(html)).port}/`;
}

/** What a page tries, each attempt recorded as `blocked`, `opaque` or `read <status> <body>`, into `window.done`. */
const ATTEMPT = `
  const tried = {};
  const attempt = async (name, request) => {
    try {
      const response = await request();
      tried[name] = response.type === 'opaque' ? 'opaque' : 'read ' + response.status + ' ' + (await response.text());
    } catch (error) {
      tried[name] = 'blocked';
    }
  };`;

async function newPage() {
  const context = await browser.newContext();
  onCleanup(() => context.close());
  return context.newPage();
}

describe('the server answers only its own clients', () => {
  it('refuses a request without a valid token (401), for a foreign Host (421), from an Origin (403), or not JSON (415)', async () => {
    const paused = await pausedRun();
    const { port, id, effectId, headers } = paused;
    const approve = (h: Record<string, string>) =>
      raw(port, { method: 'POST', path: `/runs/${id}/approve`, headers: h, body: JSON.stringify({ effectId }) });
    const create = (h: Record<string, string>) =>
      raw(port, { method: 'POST', path: '/runs', headers: h, body: '{"task":"rm -rf ~"}' });
    const { authorization: _none, ...noToken } = headers();
    for (const send of [approve, create]) {
      expect((await send(noToken)).status).toBe(401);
      expect((await send(headers({ authorization: 'Bearer not-the-token-0123456789' }))).status).toBe(401);
      expect((await send(headers({ authorization: `Bearer ${TOKEN}x` }))).status).toBe(401);
      expect((await send(headers({ authorization: TOKEN }))).status).toBe(401);
      expect((await send(headers({ authorization: `Basic ${TOKEN}` }))).status).toBe(401);
      // DNS rebinding: the browser sends the attacker's host name, even with a token it could not know.
      expect((await send(headers({ host: `attacker.example:${port}` }))).status).toBe(421);
      expect((await send(headers({ host: 'attacker.example' }))).status).toBe(421);
      expect((await send(headers({ host: `127.0.0.1.attacker.example:${port}` }))).status).toBe(421);
      expect((await send(headers({ origin: 'https://attacker.example' }))).status).toBe(403);
      expect((await send(headers({ origin: `http://127.0.0.1:${port + 1}` }))).status).toBe(403);
      expect((await send(headers({ origin: `http://localhost:${port}` }))).status).toBe(403);
      expect((await send(headers({ origin: 'null' }))).status).toBe(403);
      // The server's own page (its Origin is the Host asked for) still needs the token.
      expect((await send({ ...noToken, origin: `http://127.0.0.1:${port}` })).status).toBe(401);
      // What a page may send without a preflight: text/plain, a form, no type, with its own host.
      expect((await send(headers({ 'content-type': 'text/plain' }))).status).toBe(415);
      expect((await send(headers({ 'content-type': 'application/x-www-form-urlencoded' }))).status).toBe(415);
      expect((await send(headers({ 'content-type': 'multipart/form-data; boundary=x' }))).status).toBe(415);
      const { 'content-type': _json, ...noType } = headers();
      expect((await send(noType)).status).toBe(415);
      const forged = { ...noToken, host: `attacker.example:${port}`, 'content-type': 'text/plain' };
      expect((await send(forged)).status).toBe(421);
    }
    // Reading needs the token too: the run, its events, its trace, the list.
    const { authorization: _t, ...reader } = headers();
    for (const path of [`/runs/${id}`, `/runs/${id}/events`, `/runs/${id}/trace`, '/runs', '/agents'])
      expect((await raw(port, { method: 'GET', path, headers: reader })).status, path).toBe(401);
    // The studio's files need none (no secret in them), but still the server's own Host and no foreign Origin.
    expect((await raw(port, { method: 'GET', path: '/studio/', headers: reader })).status).toBe(200);
    expect(
      (await raw(port, { method: 'GET', path: '/studio/', headers: headers({ host: 'attacker.example' }) })).status,
    ).toBe(421);
    expect(
      (await raw(port, { method: 'GET', path: '/studio/', headers: headers({ origin: 'https://attacker.example' }) }))
        .status,
    ).toBe(403);
    // A preflight from another site is refused: no CORS headers, so the browser sends nothing after it.
    const preflight = await raw(port, {
      method: 'OPTIONS',
      path: `/runs/${id}/approve`,
      headers: {
        host: `127.0.0.1:${port}`,
        origin: 'https://attacker.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    expect(preflight.status).toBe(403);
    expect(preflight.text).not.toMatch(/access-control/i);

    await untouched(paused);
    // The same request with the token, the host and JSON is the client's own, and goes through,
    // from the server's own page too.
    expect((await approve(headers({ origin: `http://127.0.0.1:${port}` }))).status).toBe(202);
  });

  it('another site’s page in Chromium cannot list, read, approve or start runs, even knowing the token', async () => {
    const paused = await pausedRun();
    const target = `http://127.0.0.1:${paused.port}`;
    const html = `<!doctype html><body><script>
      const target = ${JSON.stringify(target)};
      const run = ${JSON.stringify(paused.id)};
      const effectId = ${JSON.stringify(paused.effectId)};
      ${ATTEMPT}
      (async () => {
        await attempt('list', () => fetch(target + '/runs'));
        await attempt('events', () => fetch(target + '/runs/' + run + '/events'));
        await attempt('withToken', () => fetch(target + '/runs/' + run + '/approve', {
          method: 'POST',
          headers: { authorization: 'Bearer ${TOKEN}', 'content-type': 'application/json' },
          body: JSON.stringify({ effectId }),
        }));
        await attempt('noCors', () => fetch(target + '/runs/' + run + '/approve', {
          method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ effectId }),
        }));
        const form = document.createElement('form');
        form.method = 'POST';
        form.action = target + '/runs';
        form.enctype = 'text/plain';
        form.target = 'sink';
        const field = document.createElement('input');
        field.name = '{"task":"rm -rf ~","x":"';
        field.value = '"}';
        form.append(field);
        const sink = document.createElement('iframe');
        sink.name = 'sink';
        document.body.append(sink, form);
        sink.onload = () => { tried.form = 'sent'; window.done = tried; };
        form.submit();
      })();
    </script></body>`;
    const hostile = await newPage();
    await hostile.goto(await site(html));
    const tried = await hostile.waitForFunction('window.done').then((handle) => handle.jsonValue());
    expect(tried).toEqual({ list: 'blocked', events: 'blocked', withToken: 'blocked', noCors: 'opaque', form: 'sent' });
    await untouched(paused);
  });

  it('another site’s page cannot frame the studio', async () => {
    const paused = await pausedRun();
    const studio = `http://127.0.0.1:${paused.port}/studio/#token=${TOKEN}`;
    const html = `<!doctype html><body><iframe id="studio" src="${studio}"></iframe><script>
      document.getElementById('studio').onload = () => { window.done = true; };
    </script></body>`;
    const hostile = await newPage();
    await hostile.goto(await site(html));
    await hostile.waitForFunction('window.done');
    // Chromium refused to render it (frame-ancestors 'none'): the frame holds no studio.
    const frame = hostile.frames().find((f) => f !== hostile.mainFrame());
    expect(await frame?.evaluate('document.querySelector("#app") === null')).toBe(true);
    await untouched(paused);
  });

  it('a DNS-rebound page (its name, then its port, now the server’s) is refused for its Host, even with the token', async () => {
    // The attacker's site, under a name the browser resolves to 127.0.0.1 (the rebinding done):
    // its page is served from one port, then the server comes up on that port, and the page's
    // requests to its own origin reach the server. It knows the run, the call and the token.
    const attacker = await serveHtml('<!doctype html><title>attacker</title>');
    const origin = `http://${REBOUND}:${attacker.port}`;
    const page = await newPage();
    await page.goto(`${origin}/`);
    await attacker.close();
    const paused = await pausedRun(attacker.port);
    // Run in the page, as its own script would.
    const attack = `(async () => {
      ${ATTEMPT}
      await attempt('list', () => fetch('/runs', { headers: { authorization: 'Bearer ${TOKEN}' } }));
      await attempt('approve', () => fetch('/runs/${paused.id}/approve', {
        method: 'POST',
        headers: { authorization: 'Bearer ${TOKEN}', 'content-type': 'application/json' },
        body: JSON.stringify({ effectId: ${JSON.stringify(paused.effectId)} }),
      }));
      await attempt('studio', () => fetch('/studio/'));
      return tried;
    })()`;
    const tried = await page.evaluate(attack);
    const refused = `read 421 {"error":"this server does not answer for host ${REBOUND}:${attacker.port}"}`;
    expect(tried).toEqual({ list: refused, approve: refused, studio: refused });
    await untouched(paused);
  });

  it('makes a token on first start, keeps it 0600 in the data dir, and keeps it across a restart', async () => {
    const dir = await tempDir();
    const start = async (dataDir: string) => {
      const server = await createServer({
        agents: { a: createAgent({ name: 'a' }) },
        llm: scriptedLlm([]),
        dataDir,
        log: () => undefined,
      });
      onCleanup(() => server.close());
      return server;
    };
    const first = await start(join(dir, 'server'));
    expect(first.token).toMatchObject({ created: true, file: join(dir, 'server', 'token') });
    expect(first.token?.value.length).toBeGreaterThanOrEqual(32);
    expect((await stat(join(dir, 'server', 'token'))).mode & 0o777).toBe(0o600);
    expect((await readFile(join(dir, 'server', 'token'), 'utf8')).trim()).toBe(first.token?.value);
    const second = await start(join(dir, 'server'));
    expect(second.token).toEqual({ ...first.token, created: false });
    const other = await start(await tempDir());
    expect(other.token?.value).not.toBe(first.token?.value);
  });

  it('answers 413 to a body over the limit without reading it whole, and serves the next request', async () => {
    const { port, headers, call, listed } = await setup([{ content: 'fine' }]);
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
    // Not JSON at all: 400, and nothing started.
    expect((await raw(port, { method: 'POST', path: '/runs', headers: headers(), body: '{"task":' })).status).toBe(400);

    expect((await listed()).runs).toEqual([]);
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
 * The server on a store whose loads, while `together` runs, wait for each other in pairs: two
 * requests deciding on one run both read it before either records its decision, so only the
 * store's compare-and-set can tell them apart.
 */
async function racing(script: Parameters<typeof setup>[0]) {
  const dir = await tempDir();
  const files = createSqliteStore(join(dir, 'server', 'runs.db'));
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
  const served = await setup(script, { dir, store });
  const together = async <T>(work: () => Promise<T>): Promise<T> => {
    const { promise: opened, resolve: open } = withResolvers();
    gate = { loads: 0, open, opened };
    try {
      return await work();
    } finally {
      gate = undefined;
    }
  };
  return { ...served, together };
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
