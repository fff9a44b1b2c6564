import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAgent, defineTool, type LlmPort } from '@openmanus/core';
import { scriptedLlm } from '@openmanus/core/testing';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AgentServer, createServer } from '../src/index.js';
import { launchChromium } from './chromium.js';

const TOKEN = 'test-token-0123456789abcdef';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys a service',
  parameters: z.object({ service: z.string() }),
  execute: async ({ service }) => `deployed ${service}`,
});

// The docs' screenshots are these tests' (`pnpm docs:pictures studio` sets the directory); otherwise
// they go to a temp dir, so a test run leaves the checkout as it was.
let shots: string;
beforeAll(async () => {
  shots = process.env.OPENMANUS_STUDIO_SHOTS ?? (await mkdtemp(join(tmpdir(), 'openmanus-studio-shots-')));
  await mkdir(shots, { recursive: true });
});
afterAll(async () => {
  if (!process.env.OPENMANUS_STUDIO_SHOTS) await rm(shots, { recursive: true, force: true });
});
const shot = (name: string) => join(shots, name);

async function studio(models: Record<string, LlmPort> = {}): Promise<{ server: AgentServer; url: string }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'openmanus-studio-'));
  const server = await createServer({
    agents: { ops: createAgent({ name: 'ops', tools: [deploy] }) },
    llm: scriptedLlm([
      { toolCalls: [{ name: 'deploy', arguments: { service: 'api' } }] },
      { content: 'Deployed the api.' },
    ]),
    approvals: ['deploy'],
    dataDir,
    token: TOKEN,
    models,
    log: () => undefined,
  });
  const port = await server.listen(0);
  cleanups.push(async () => {
    await server.idle();
    await server.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  return { server, url: `http://127.0.0.1:${port}/studio/#token=${TOKEN}` };
}

describe('the studio in Chromium', () => {
  it('lists a paused run, opens it, shows a model call and approves the call from the page', async () => {
    const { server, url } = await studio();
    server.runs.start('deploy the api', undefined);
    await server.idle();
    const context = await browser.newContext();
    cleanups.push(() => context.close());
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(url);
    const row = page.locator('#runs li').first();
    await expect.poll(() => row.textContent()).toContain('awaiting_approval');
    await row.click();
    await page.locator('#timeline button.approve').waitFor();
    expect(await page.locator('#timeline').textContent()).toContain('deploy');
    await page.locator('#timeline button.approve').click();
    await page.locator('#answer-box:not([hidden])').waitFor();
    expect(await page.locator('#answer').textContent()).toBe('Deployed the api.');
    expect(errors).toEqual([]);
  });

  it('opens a model call to its messages, inspects a state, and forks from transition 3 onto another model', async () => {
    const other = scriptedLlm([{ content: 'Rolled back instead.' }], 'other-model');
    const { server, url } = await studio({ other });
    const id = server.runs.start('deploy the api', undefined);
    await server.idle();
    const pending = (await server.runs.view(id, undefined)).pending[0];
    await server.runs.decide(id, undefined, pending?.effectId ?? '', { approved: true });
    await server.idle();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    cleanups.push(() => context.close());
    const page = await context.newPage();
    await page.goto(url);
    await page.locator('#runs li').first().click();
    await page.locator('#answer-box:not([hidden])').waitFor();

    // The first model call's request, fetched when opened: the task is among its messages.
    const request = page.locator('#timeline li.model-call details.request').first();
    await request.locator('summary').click();
    await expect.poll(() => request.textContent()).toContain('deploy the api');
    await page.screenshot({ path: shot('timeline.png'), fullPage: true });

    // The state after transition 3.
    const third = page.locator('#timeline li.transition[data-n="3"]');
    await third.locator('button.inspect').click();
    await page.locator('#inspector:not([hidden])').waitFor();
    await expect.poll(() => page.locator('#state-tree').textContent()).toContain('messages');

    // Fork from there onto the other model: both runs side by side.
    await third.locator('button.fork').click();
    await third.locator('select.change-model').selectOption('other');
    await third.locator('button.start-fork').click();
    await page.locator('#compare-view:not([hidden])').waitFor();
    await expect.poll(() => page.locator('#compare-right').textContent()).toContain('Rolled back instead.');
    expect(await page.locator('#compare-left').textContent()).toContain('Deployed the api.');
    await page.screenshot({ path: shot('fork.png'), fullPage: true });
  });

  it('fits a narrow window without scrolling sideways', async () => {
    const { server, url } = await studio();
    server.runs.start('deploy the api', undefined);
    await server.idle();
    const context = await browser.newContext({ viewport: { width: 390, height: 800 } });
    cleanups.push(() => context.close());
    const page = await context.newPage();
    await page.goto(url);
    await page.locator('#runs li').first().click();
    await page.locator('#timeline button.approve').waitFor();
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    await page.screenshot({ path: shot('narrow.png') });
  });
});
