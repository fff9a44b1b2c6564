import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Agent, askHuman, createAgent, defineTool, type LlmPort } from '@openmanus/core';
import { scriptedLlm } from '@openmanus/core/testing';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AgentServer, createServer, type ServerOptions } from '../src/index.js';
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

const deployScript = () =>
  scriptedLlm([{ toolCalls: [{ name: 'deploy', arguments: { service: 'api' } }] }, { content: 'Deployed the api.' }]);

interface Studio {
  readonly server: AgentServer;
  readonly url: string;
}

async function studio(
  agent: Agent,
  llm: LlmPort,
  more: Partial<ServerOptions> = {},
  beforeIdle: () => void = () => undefined,
): Promise<Studio> {
  const dataDir = await mkdtemp(join(tmpdir(), 'openmanus-studio-live-'));
  const server = await createServer({
    agents: { [agent.config.name]: agent },
    llm,
    dataDir,
    token: TOKEN,
    log: () => undefined,
    ...more,
  });
  const port = await server.listen(0);
  cleanups.push(async () => {
    // A run held by a test that failed early is let go, or `idle` would wait for it forever.
    beforeIdle();
    await server.idle();
    await server.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  return { server, url: `http://127.0.0.1:${port}/studio/#token=${TOKEN}` };
}

/** A fresh page; what it throws is collected (each test expects none). */
async function open(url: string): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  cleanups.push(() => context.close());
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(url);
  await page.locator('html[data-ready="yes"]').waitFor();
  return { page, errors };
}

/** A promise the test settles: what a gated tool waits on. */
function gate() {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

const text = async (page: Page, selector: string) => (await page.locator(selector).textContent()) ?? '';
const focusedId = (page: Page) => page.evaluate('document.activeElement?.dataset?.id ?? null');
const focusedKey = (page: Page) => page.evaluate('document.activeElement?.dataset?.key ?? null');

describe('the studio, live, in Chromium', () => {
  it('follows a running run over server-sent events: new entries and the answer appear without a reload', async () => {
    const build = gate();
    const thinking = gate();
    const waitForBuild = defineTool({
      name: 'wait_for_build',
      description: 'Waits until the build is ready',
      parameters: z.object({}),
      execute: async () => {
        await build.opened;
        return 'build 42 ready';
      },
    });
    // The tool waits for the build, then the model's second reply waits for `thinking`.
    const script = scriptedLlm([
      { toolCalls: [{ name: 'wait_for_build', arguments: {} }] },
      { content: 'Build 42 shipped.' },
    ]);
    let calls = 0;
    const llm: LlmPort = {
      model: script.model,
      complete: (request, options) => {
        const reply = script.complete(request, options);
        if (calls++ === 0) return reply;
        return reply.map(async (answer) => {
          await thinking.opened;
          return answer;
        });
      },
    };
    const { server, url } = await studio(createAgent({ name: 'ci', tools: [waitForBuild] }), llm, {}, () => {
      build.open();
      thinking.open();
    });
    const id = server.runs.start('ship the build', undefined);
    const { page, errors } = await open(url);
    await page.locator(`#runs li[data-id="${id}"]`).click();

    // The run is open while its tool still runs: the page follows it.
    const call = page.locator('#timeline li.tool-call[data-tool="wait_for_build"]');
    await expect.poll(() => call.textContent()).toContain('running…');
    await expect.poll(() => text(page, '#connection')).toBe('live');
    expect(await page.locator('#answer-box').isHidden()).toBe(true);
    // A reload while it runs comes back to it and follows it again.
    await page.reload();
    await page.locator('html[data-ready="yes"]').waitFor();
    await expect.poll(() => call.textContent()).toContain('running…');
    await expect.poll(() => text(page, '#connection')).toBe('live');
    await page.evaluate('window.notReloaded = true');

    // The tool's result comes in, and the model is asked again.
    build.open();
    await expect.poll(() => call.locator('pre.result').count()).toBe(1);
    expect(await call.locator('pre.result').textContent()).toBe('build 42 ready');
    const second = page.locator('#timeline li.model-call').nth(1);
    await expect.poll(() => second.textContent()).toContain('waiting for the model…');
    expect(await page.locator('#run-pane').getAttribute('data-status')).toBe('awaiting_llm');
    expect(await page.locator('#answer-box').isHidden()).toBe(true);

    thinking.open();
    await page.locator('#answer-box:not([hidden])').waitFor();
    expect(await text(page, '#answer')).toBe('Build 42 shipped.');
    expect(await second.locator('p.reply').textContent()).toBe('Build 42 shipped.');
    await expect.poll(() => page.locator('#run-pane').getAttribute('data-status')).toBe('finished');
    // The runs list follows too, and the stream is over.
    await expect.poll(() => page.locator(`#runs li[data-id="${id}"]`).getAttribute('data-status')).toBe('finished');
    await expect.poll(() => text(page, '#connection')).toBe('');
    expect(await page.evaluate('window.notReloaded')).toBe(true);
    expect(errors).toEqual([]);
  });

  it('comes back to a paused run after a reload, still waiting for approval, and approves it from there', async () => {
    const { server, url } = await studio(createAgent({ name: 'ops', tools: [deploy] }), deployScript(), {
      approvals: ['deploy'],
    });
    const id = server.runs.start('deploy the api', undefined);
    await server.idle();
    const { page, errors } = await open(url);
    await page.locator(`#runs li[data-id="${id}"]`).click();
    await page.locator('#timeline li.pending-approval button.approve').waitFor();
    // The token left the address; the run is in it.
    expect(new URL(page.url()).hash).toBe(`#run=${id}`);

    await page.reload();
    await page.locator('html[data-ready="yes"]').waitFor();
    const pending = page.locator('#timeline li.pending-approval');
    await pending.locator('button.approve').waitFor();
    expect(await pending.locator('code.tool-name').textContent()).toBe('deploy');
    expect(await page.locator('#run-pane').getAttribute('data-status')).toBe('awaiting_approval');
    expect(await page.locator('#no-token').isHidden()).toBe(true);

    await pending.locator('button.approve').click();
    await page.locator('#answer-box:not([hidden])').waitFor();
    expect(await text(page, '#answer')).toBe('Deployed the api.');
    await expect.poll(() => page.locator('#timeline li.pending').count()).toBe(0);
    expect((await server.runs.view(id, undefined)).status).toBe('finished');
    expect(errors).toEqual([]);
  });

  it('moves through the runs with j/k and the arrows, opens one with Enter, closes with Esc and filters with /', async () => {
    // Every run answers with its own task.
    const echo = scriptedLlm((request) => ({
      content: `Done: ${request.messages.findLast((m) => m.role === 'user')?.content}`,
    }));
    const { server, url } = await studio(createAgent({ name: 'ops', tools: [deploy] }), echo);
    for (const task of ['alpha', 'beta', 'gamma']) server.runs.start(task, undefined);
    await server.idle();
    const { page, errors } = await open(url);
    await expect.poll(() => page.locator('#runs li.entry').count()).toBe(3);
    const ids = await page
      .locator('#runs li.entry')
      .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-id')));

    await page.keyboard.press('j');
    expect(await focusedId(page)).toBe(ids[0]);
    await page.keyboard.press('j');
    expect(await focusedId(page)).toBe(ids[1]);
    await page.keyboard.press('ArrowDown');
    expect(await focusedId(page)).toBe(ids[2]);
    await page.keyboard.press('j'); // the last stays
    expect(await focusedId(page)).toBe(ids[2]);
    await page.keyboard.press('k');
    expect(await focusedId(page)).toBe(ids[1]);
    await page.keyboard.press('ArrowUp');
    expect(await focusedId(page)).toBe(ids[0]);
    await page.keyboard.press('j');

    await page.keyboard.press('Enter');
    await page.locator('#run-pane:not([hidden])').waitFor();
    await page.locator('#answer-box:not([hidden])').waitFor();
    const task = await text(page, '#run-title');
    expect(await text(page, '#answer')).toBe(`Done: ${task}`);
    expect(await page.locator('#runs li.selected').getAttribute('data-id')).toBe(ids[1]);
    expect(new URL(page.url()).hash).toBe(`#run=${ids[1]}`);

    // The focus is in the run now: the keys walk its timeline, Enter opens an entry, Esc closes it.
    const keys = await page
      .locator('#timeline > li.entry')
      .evaluateAll((entries) => entries.map((entry) => entry.getAttribute('data-key')));
    expect(keys.slice(0, 2)).toEqual(['t1', expect.stringMatching(/^m/)]);
    await expect.poll(() => focusedKey(page)).toBe('t1');
    await page.keyboard.press('j');
    expect(await focusedKey(page)).toBe(keys[1]);
    await page.keyboard.press('Enter');
    const request = page.locator('#timeline li.model-call details.request');
    await expect.poll(() => request.textContent()).toContain(task);
    expect(await request.getAttribute('open')).toBe('');
    await page.keyboard.press('Escape');
    expect(await request.getAttribute('open')).toBeNull();
    expect(await page.locator('#run-pane').isVisible()).toBe(true);
    await page.keyboard.press('k');
    await page.keyboard.press('Enter');
    await page.locator('#inspector[data-n="1"]:not([hidden])').waitFor();

    // Esc closes the state first, then the run; the focus goes back to where it was.
    await page.keyboard.press('Escape');
    await page.locator('#inspector').waitFor({ state: 'hidden' });
    expect(await focusedKey(page)).toBe('t1');
    await page.keyboard.press('Escape');
    await page.locator('#run-pane').waitFor({ state: 'hidden' });
    expect(await focusedId(page)).toBe(ids[1]);
    expect(new URL(page.url()).hash).toBe('');
    expect(await page.locator('#runs li.selected').count()).toBe(0);

    // `/` goes to the filter (the slash is not typed into it); Esc leaves it for the list again.
    await page.keyboard.press('/');
    expect(await page.evaluate('document.activeElement?.id')).toBe('filter-text');
    expect(await page.locator('#filter-text').inputValue()).toBe('');
    await page.keyboard.type('gam');
    await expect.poll(() => page.locator('#runs li.entry').count()).toBe(1);
    await page.keyboard.press('Escape');
    expect(await page.evaluate('document.activeElement?.id ?? null')).not.toBe('filter-text');
    await page.keyboard.press('j');
    await page.keyboard.press('Enter');
    await expect.poll(() => text(page, '#answer')).toBe('Done: gamma');
    expect(errors).toEqual([]);
  });

  it('answers the question a run asks in place, and the run goes on with the answer', async () => {
    const llm = scriptedLlm([
      { toolCalls: [{ name: 'ask_human', arguments: { inquire: 'Which region should I deploy to?' } }] },
      (request) => ({ content: `Deploying to ${request.messages.findLast((m) => m.role === 'tool')?.content}.` }),
    ]);
    const { server, url } = await studio(createAgent({ name: 'ops', tools: [askHuman] }), llm);
    const id = server.runs.start('deploy the api', undefined);
    await server.idle();
    const { page, errors } = await open(url);
    // The run's event stream is held until the answer is half typed: the update it brings then
    // (the stream of a paused run ends at once) rebuilds the timeline under the typing.
    let releaseEvents: () => void = () => undefined;
    const eventsHeld = new Promise<void>((resolve) => {
      releaseEvents = resolve;
    });
    await page.route('**/events', async (route) => {
      await eventsHeld;
      await route.continue();
    });
    await page.locator(`#runs li[data-id="${id}"]`).click();

    const question = page.locator('#timeline li.pending-human');
    await question.waitFor();
    expect(await question.locator('p.question').textContent()).toBe('Which region should I deploy to?');
    expect(await page.locator('#run-pane').getAttribute('data-status')).toBe('awaiting_human');
    // The question is answered where it is asked, not in the conversation box.
    expect(await page.locator('#message-form').isHidden()).toBe(true);

    await question.locator('input.answer-text').click();
    await page.keyboard.type('eu-west');
    const typedIn = await question.elementHandle();
    releaseEvents();
    await page.waitForFunction((entry: { isConnected: boolean } | null) => !entry?.isConnected, typedIn);
    // Rebuilt, the entry keeps what was typed and the focus: the typing goes on.
    expect(await question.locator('input.answer-text').inputValue()).toBe('eu-west');
    await page.keyboard.type('-1');
    await page.keyboard.press('Enter');
    await page.locator('#answer-box:not([hidden])').waitFor();
    expect(await text(page, '#answer')).toBe('Deploying to eu-west-1.');
    await expect.poll(() => page.locator('#timeline li.pending').count()).toBe(0);
    expect(await page.locator('#timeline li.transition[data-event="humanReplied"]').count()).toBe(1);
    // Answered and finished, the conversation can go on.
    expect(await page.locator('#message-form').isVisible()).toBe(true);
    expect((await server.runs.view(id, undefined)).answer).toBe('Deploying to eu-west-1.');
    expect(errors).toEqual([]);
  });

  it('replays a run from the page: unchanged it matches, with another system prompt it shows where it diverges', async () => {
    // Two runs: each deploys, then answers.
    const llm = scriptedLlm((request) =>
      request.messages.at(-1)?.role === 'tool'
        ? { content: 'Deployed the api.' }
        : { toolCalls: [{ name: 'deploy', arguments: { service: 'api' } }] },
    );
    const { server, url } = await studio(createAgent({ name: 'ops', tools: [deploy] }), llm);
    const id = server.runs.start('deploy the api', undefined);
    const other = server.runs.start('deploy the api again', undefined);
    await server.idle();
    const { page, errors } = await open(url);
    await page.locator(`#runs li[data-id="${id}"]`).click();
    await page.locator('#answer-box:not([hidden])').waitFor();
    const transitions = await page.locator('#timeline li.transition').count();

    await page.locator('#replay-toggle').click();
    const form = page.locator('#replay-form');
    await form.waitFor();
    // A replay calls no model: the form offers only what a replay can change.
    expect(await form.locator('select.change-model').count()).toBe(0);
    expect(await form.locator('.change-tools input[value="deploy"]').isChecked()).toBe(true);

    await page.locator('#replay-start').click();
    const result = page.locator('#replay-result[data-diverged="no"]');
    await result.waitFor();
    expect(await result.textContent()).toBe(`Replayed ${transitions} transitions: the run does not diverge.`);
    expect(await page.locator('#timeline li.diverged').count()).toBe(0);

    await form.locator('textarea.change-prompt').fill('Be terse.');
    await page.locator('#replay-start').click();
    const diverged = page.locator('#replay-result[data-diverged="yes"]');
    await diverged.waitFor();
    expect(await diverged.locator('.diverges').textContent()).toMatch(/^Diverges at transition #1 \(started\): /);
    // What differs is shown, the new prompt among it, and the transition is marked in the timeline.
    expect(await diverged.textContent()).toContain('Be terse.');
    expect(await page.locator('#timeline li.diverged').getAttribute('data-n')).toBe('1');

    // Back to the recorded prompt: it matches again and the mark goes.
    await form.locator('textarea.change-prompt').fill('');
    await page.locator('#replay-start').click();
    await result.waitFor();
    expect(await page.locator('#timeline li.diverged').count()).toBe(0);

    // Another run opened starts with no replay of its own: neither the result nor the form is left over.
    await form.locator('textarea.change-prompt').fill('Be terse.');
    await page.locator(`#runs li[data-id="${other}"]`).click();
    await expect.poll(() => text(page, '#run-title')).toBe('deploy the api again');
    expect(await page.locator('#replay-result').isHidden()).toBe(true);
    expect(await form.isHidden()).toBe(true);
    await page.locator('#replay-toggle').click();
    expect(await form.locator('textarea.change-prompt').inputValue()).toBe('');
    expect(errors).toEqual([]);
  });
  it('shows the runs a page at a time, and the next page on “More runs”', async () => {
    const total = 53;
    const { server, url } = await studio(
      createAgent({ name: 'notes' }),
      scriptedLlm(Array.from({ length: total }, (_, i) => ({ content: `note ${i}` }))),
    );
    for (let i = 0; i < total; i++) {
      server.runs.start(`note number ${i}`, undefined);
      await server.idle();
    }
    const { page, errors } = await open(url);
    await expect.poll(() => page.locator('#runs li').count()).toBe(50);
    expect(await text(page, '#run-count')).toBe('(50+)');
    await page.locator('#more-runs').click();
    await expect.poll(() => page.locator('#runs li').count()).toBe(total);
    expect(await text(page, '#run-count')).toBe(`(${total})`);
    expect(await page.locator('#more-runs').isHidden()).toBe(true);
    expect(await text(page, '#runs li:last-child .run-task')).toBe('note number 0');
    expect(errors).toEqual([]);
  });
});
