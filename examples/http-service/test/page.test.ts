// The studio that `pnpm serve` prints the address of, in a real Chromium, with the recorded demo:
// a person starts the demo run, approves its Python call, reads the answer, sends a second
// message; and finds a paused run again after the server was killed and started anew.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_TASK } from '../src/demoModel.js';
import { serve } from './child.js';
import { onCleanup, tempDir, until } from './helpers.js';

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

async function newPage(): Promise<Page> {
  const context = await browser.newContext();
  onCleanup(() => context.close());
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  onCleanup(async () => expect(errors).toEqual([]));
  return page;
}

/** Starts the demo task from the studio's form; resolves once its Python call waits for approval. */
async function startDemo(page: Page) {
  await page.locator('#new-task').fill(DEMO_TASK);
  await page.locator('#start').click();
  await page.locator('#timeline button.approve').waitFor();
}

describe('the studio of `pnpm serve`, in a real Chromium, with the recorded demo', () => {
  it('starts the demo run, shows the Python call waiting, takes the approval, shows the answer, takes a next message', async () => {
    const served = await serve(await tempDir());
    const page = await newPage();
    await page.goto(served.url);
    // The token left the address (kept for this tab only).
    await page.locator('html[data-ready="yes"]').waitFor();
    expect(page.url()).toBe(`http://127.0.0.1:${served.port}/studio/`);
    await startDemo(page);
    const timeline = page.locator('#timeline');
    expect(await timeline.textContent()).toContain('python_execute');
    expect(await timeline.textContent()).toContain('primes = [n for n in range(2, 50)');
    expect(await page.locator('#run-meta').textContent()).toContain('awaiting_approval');
    expect(await page.locator('#answer-box').isHidden()).toBe(true);

    await page.locator('#timeline button.approve').click();
    await page.locator('#answer').getByText('their sum is 328').waitFor();
    await expect.poll(() => page.locator('#run-meta').textContent()).toContain('finished (terminated)');
    expect(await timeline.textContent()).toContain('sum: 328');
    expect(await page.locator('#runs li').count()).toBe(1);

    // A next turn: the scripted model says it only replays the recording.
    await page.locator('#message').fill('And below 100?');
    await page.locator('#send').click();
    await page.locator('#answer').getByText('cannot answer "And below 100?"').waitFor();
  });

  it('a run paused when the server is killed is there after a restart, and finishes once approved', async () => {
    const dir = await tempDir();
    const port = String(await freePort());
    const first = await serve(dir, { PORT: port });
    const page = await newPage();
    await page.goto(first.url);
    await startDemo(page);
    const { runs } = (await first.call('GET', '/runs')).json as { runs: { id: string }[] };
    const id = runs[0]?.id ?? '';

    // SIGKILL while the run waits; the same command in the same directory, on the same port.
    first.process.kill('SIGKILL');
    await first.exited;
    const second = await serve(dir, { PORT: port });
    // The token was kept in the data dir: the same address.
    expect(second.url).toBe(first.url);
    // The page, reloaded (its address names the run, not the token), still has the token (this tab's) and shows the run.
    expect(page.url()).toBe(`http://127.0.0.1:${port}/studio/#run=${id}`);
    await page.reload();
    await page.locator('#timeline button.approve').click();
    await page.locator('#answer').getByText('their sum is 328').waitFor();
    await until(async () => (await second.call('GET', `/runs/${id}`)).json.status === 'finished');
  });
});
