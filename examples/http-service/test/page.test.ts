import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildChild, type Child, startChild } from './child.js';
import { onCleanup, TOKEN, tempDir, until } from './helpers.js';

const CHROMIUM = process.env.CHROME_PATH ?? '/usr/bin/chromium';

let browser: Browser;
beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
});
afterAll(async () => {
  await browser?.close();
});

/** A port free right now (the restarted service must come back on the one the page knows). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** `pnpm serve`'s program (src/main.ts) in a child process, in `dir`, with no model configured. */
async function serve(dir: string, port: number): Promise<Child> {
  const main = await buildChild('src/main.ts');
  return startChild(main, [], { PORT: String(port), OPENMANUS_SERVICE_TOKEN: TOKEN }, dir);
}

async function newPage(): Promise<Page> {
  const context = await browser.newContext();
  onCleanup(() => context.close());
  return context.newPage();
}

const pendingApproval = (page: Page) => page.locator('#pending button.approve');

/** Another site's page, trying everything a page can to drive the service at `port` (it even knows the token). */
async function hostileSite(port: number, runId: string) {
  const target = `http://127.0.0.1:${port}`;
  const html = `<!doctype html><body><script>
    const target = ${JSON.stringify(target)};
    const run = ${JSON.stringify(runId)};
    const tried = {};
    const attempt = async (name, request) => {
      try {
        const response = await request();
        tried[name] = response.type === 'opaque' ? 'opaque' : 'read ' + response.status + ' ' + (await response.text());
      } catch (error) {
        tried[name] = 'blocked';
      }
    };
    (async () => {
      await attempt('list', () => fetch(target + '/runs'));
      await attempt('events', () => fetch(target + '/runs/' + run + '/events'));
      await attempt('withToken', () => fetch(target + '/runs/' + run + '/approve', {
        method: 'POST',
        headers: { authorization: 'Bearer ${TOKEN}', 'content-type': 'application/json' },
        body: JSON.stringify({ effectId: 'x' }),
      }));
      await attempt('noCors', () => fetch(target + '/runs/' + run + '/approve', {
        method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: '{"effectId":"x"}',
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
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(html));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(() => new Promise((resolve) => server.close(() => resolve())));
  // localhost: another origin than the service's 127.0.0.1 (and another port).
  return `http://localhost:${(server.address() as AddressInfo).port}/`;
}

describe('the page, in a real Chromium, against `pnpm serve` with the scripted model', () => {
  it('starts a run, shows its plan, steps and events live, takes an approval, shows the answer', async () => {
    const dir = await tempDir();
    const service = await serve(dir, 0);
    expect(service.url).toBe(`http://127.0.0.1:${service.port}/#token=${TOKEN}`);
    const page = await newPage();
    await page.goto(service.url ?? '');
    // The token left the address (kept for this tab only).
    expect(page.url()).toBe(`http://127.0.0.1:${service.port}/`);
    await page.locator('#start').click();

    // The run pauses on the python call: the plan, the steps so far and the events are on the page.
    await pendingApproval(page).waitFor();
    expect(await page.locator('#pending pre').textContent()).toContain('primes = [n for n in range(2, 50)');
    expect(await page.locator('#plan li').allTextContents()).toEqual([
      '[→] List the primes below 50 with Python',
      '[ ] Add them up',
      '[ ] Report the result',
    ]);
    expect(await page.locator('#status').textContent()).toMatch(/^awaiting_approval/);
    expect(await page.locator('#timeline li.call').evaluateAll((calls) => calls.map((c) => c.dataset.tool))).toEqual([
      'planning',
      'planning',
      'python_execute',
    ]);
    expect(Number(await page.locator('#event-count').textContent())).toBeGreaterThan(5);
    expect(await page.locator('#events li').allTextContents()).toContain('event llmResponded');
    expect(await page.locator('#answer-box').isHidden()).toBe(true);

    await pendingApproval(page).click();
    await page.locator('#answer').getByText('their sum is 328').waitFor();
    expect(await page.locator('#status').textContent()).toMatch(/^finished \(terminated\)/);
    // What the run used; the scripted model has no price.
    expect(await page.locator('#usage').textContent()).toMatch(/^[\d,]+ in · [\d,]+ out · cost unknown$/);
    expect(await page.locator('#plan li').allTextContents()).toEqual([
      '[✓] List the primes below 50 with Python — 15 primes, from 2 to 47',
      '[✓] Add them up — sum 328',
      '[✓] Report the result',
    ]);
    const python = page.locator('#timeline li.call[data-tool="python_execute"] pre.result');
    expect(await python.textContent()).toContain('sum: 328');
    expect(await page.locator('#pending-box').isHidden()).toBe(true);

    // Multi-turn: the scripted model says it is scripted, in the same conversation.
    await page.locator('#message').fill('And below 100?');
    await page.locator('#send').click();
    await page.locator('#answer').getByText('cannot answer "And below 100?"').waitFor();
    expect(await page.locator('#timeline li.user').allTextContents()).toEqual([
      'Find the prime numbers below 50 and their sum with Python. Plan the work first.',
      'And below 100?',
    ]);
  });

  it('another site cannot drive it; a run paused when the server is killed goes on after a restart', async () => {
    const dir = await tempDir();
    const port = await freePort();
    const first = await serve(dir, port);
    const page = await newPage();
    await page.goto(first.url ?? '');
    await page.locator('#start').click();
    await pendingApproval(page).waitFor();
    const { runs } = (await first.call('GET', '/runs')).json as { runs: { id: string }[] };
    const id = runs[0]?.id ?? '';

    // A page of another site, in the same browser, even with the token.
    const hostile = await (await browser.newContext()).newPage();
    onCleanup(() => hostile.context().close());
    await hostile.goto(await hostileSite(port, id));
    const tried = await hostile.waitForFunction('window.done').then((handle) => handle.jsonValue());
    expect(tried).toEqual({ list: 'blocked', events: 'blocked', withToken: 'blocked', noCors: 'opaque', form: 'sent' });
    const after = (await first.call('GET', `/runs/${id}`)).json;
    expect(after).toMatchObject({ status: 'awaiting_approval', pending: [{ tool: 'python_execute' }] });
    expect((await first.call('GET', '/runs')).json.runs).toHaveLength(1);

    // SIGKILL while the run waits; the same command on the same directory and port.
    first.process.kill('SIGKILL');
    await first.exited;
    const second = await serve(dir, port);
    expect(second.url).toBe(first.url);
    // The page, reloaded, still has its token (this tab's) and shows the run where it was.
    await page.goto(`http://127.0.0.1:${port}/#run=${id}`);
    await pendingApproval(page).click();
    await page.locator('#answer').getByText('their sum is 328').waitFor();
    await until(async () => (await second.call('GET', `/runs/${id}`)).json.status === 'finished');
  });
});
