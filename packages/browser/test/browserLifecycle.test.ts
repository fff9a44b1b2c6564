// The browser's life: started on first use (not before), one context per run, closed when the last
// run ends and when the process exits, started again after a crash; one action at a time; an
// action's failure never closes the browser; a missing browser is a clear error.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createAgent, run } from '@openmanus/core';
import { processesMatching, scriptedLlm, toolSession } from '@openmanus/core/testing';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrowserUse } from '../src/browserUse.js';
import type { BrowserUseOptions } from '../src/settings.js';
import { chromePath, refIn, testResolver } from './harness.js';
import { type Site, startSite } from './site.js';

const chrome = chromePath();

/** Resolves once `check` holds, for what only shows in /proc. */
async function eventually(check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('the condition did not hold in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.skipIf(!chrome)('the browser lifecycle', () => {
  let site: Site;
  beforeAll(async () => {
    site = await startSite();
  });
  afterAll(() => site.close());

  /** A tool that starts its own browser, marked so that its processes can be found. */
  const ownBrowser = (marker: string, options: BrowserUseOptions = {}) =>
    createBrowserUse({
      allowHosts: [site.host],
      resolve: testResolver,
      extraChromiumArgs: [`--openmanus-test-marker=${marker}`],
      ...options,
    });
  const browsers = (marker: string) => processesMatching(`--openmanus-test-marker=${marker}`);

  it('starts the browser at the first call of a run, and leaves no process once the run ends', async () => {
    const marker = `run-${process.pid}-${Date.now()}`;
    const tool = ownBrowser(marker);
    const seen: number[] = [];
    const llm = scriptedLlm([
      { toolCalls: [{ name: 'browser_use', arguments: { action: 'go_to_url', url: `${site.url}/page2.html` } }] },
      () => {
        seen.push(browsers(marker).length);
        return { content: 'Page two says: the second page.' };
      },
    ]);
    expect(browsers(marker)).toEqual([]);
    const result = await run(createAgent({ name: 'browsing', tools: [tool] }), 'Read page two', { llm });
    expect(result.answer).toBe('Page two says: the second page.');
    expect(seen[0]).toBeGreaterThan(0);
    await eventually(() => browsers(marker).length === 0);
  });

  it('gives each run its own context: runs never see each other’s tabs, and one ending leaves the other working', async () => {
    const marker = `share-${process.pid}-${Date.now()}`;
    const tool = ownBrowser(marker);
    const first = toolSession(tool, { runId: 'first' });
    const second = toolSession(tool, { runId: 'second' });
    try {
      const [a, b] = await Promise.all([
        first.call({ action: 'go_to_url', url: `${site.url}/page2.html` }),
        second.call({ action: 'go_to_url', url: `${site.url}/tab.html` }),
      ]);
      expect(a.output).toMatch(/Tabs: \[0\]\* Page Two — [^|]*\n/);
      expect(b.output).toMatch(/Tabs: \[0\]\* New Tab Page — [^|]*\n/);
      // One browser process serves both.
      const processes = browsers(marker).length;
      expect(processes).toBeGreaterThan(0);
      await first.close();
      const after = await second.call({ action: 'get_current_state' });
      expect(after).toMatchObject({ isError: false, output: expect.stringContaining('Title: New Tab Page') });
      expect(browsers(marker).length).toBe(processes);
    } finally {
      await first.close();
      await second.close();
    }
    await eventually(() => browsers(marker).length === 0);
  });

  it('starts the browser again when it crashed, and says so', async () => {
    const marker = `crash-${process.pid}-${Date.now()}`;
    const session = toolSession(ownBrowser(marker));
    try {
      await session.call({ action: 'go_to_url', url: `${site.url}/page2.html` });
      for (const pid of browsers(marker)) process.kill(pid, 'SIGKILL');
      await eventually(() => browsers(marker).length === 0);
      const next = await session.call({ action: 'go_to_url', url: `${site.url}/tab.html` });
      expect(next.isError, next.output).toBe(false);
      expect(next.output).toContain(
        'Events: the browser had closed or crashed; a new one was started (the tabs before are gone)',
      );
      expect(next.output).toContain('Title: New Tab Page');
    } finally {
      await session.close();
    }
    await eventually(() => browsers(marker).length === 0);
  });

  it('opens the page of a tab whose renderer crashed again in a new tab, and says so', async () => {
    const marker = `renderer-${process.pid}-${Date.now()}`;
    let context: BrowserContext | undefined;
    const session = toolSession(
      ownBrowser(marker, {
        onContext: (created) => {
          context = created;
        },
      }),
    );
    try {
      await session.call({ action: 'go_to_url', url: `${site.url}/page2.html` });
      const page = context?.pages()[0];
      if (!context || !page) throw new Error('no page');
      const crashed = new Promise((resolve) => page.once('crash', resolve));
      const devtools = await context.newCDPSession(page);
      // The call gets no answer: its page is gone.
      void devtools.send('Page.crash').catch(() => {});
      await crashed;
      const state = await session.call({ action: 'get_current_state' });
      expect(state.isError, state.output).toBe(false);
      expect(state.output).toContain('Events: the page in tab [0] crashed; it was opened again in tab [1]');
      expect(state.output).toMatch(/URL: http:\/\/127\.0\.0\.1:\d+\/page2\.html {3}Title: Page Two/);
      expect(state.output).toMatch(/Tabs: \[1\]\* Page Two/);
      const next = await session.call({ action: 'go_to_url', url: `${site.url}/tab.html` });
      expect(next.output).toContain('Title: New Tab Page');
    } finally {
      await session.close();
    }
  });

  it('a failed action leaves the browser and the page as they were; calls of one run never interleave', async () => {
    const marker = `errors-${process.pid}-${Date.now()}`;
    const session = toolSession(ownBrowser(marker));
    try {
      const state = (await session.call({ action: 'go_to_url', url: `${site.url}/` })).output;
      expect((await session.call({ action: 'send_keys', keys: 'NoSuchKey' })).isError).toBe(true);
      expect((await session.call({ action: 'click_element', ref: 'e999' })).isError).toBe(true);
      const text = 'typed one key at a time';
      const [typed, seen] = await Promise.all([
        session.call({ action: 'input_text', ref: refIn(state, 'textbox "Name"'), text, slowly: true }),
        session.call({ action: 'get_current_state' }),
      ]);
      expect(typed.isError, typed.output).toBe(false);
      // The state was taken after the typing, never half-way through.
      expect(seen.output).toContain(`"${text}"`);
      expect(seen.output).toContain('Title: Fixture Home');
    } finally {
      await session.close();
    }
  });

  it('a browser that is not there is a clear error saying how to get one', async () => {
    const session = toolSession(createBrowserUse({ chromeInstancePath: '/nonexistent/chrome' }));
    try {
      const result = await session.call({ action: 'go_to_url', url: `${site.url}/` });
      expect(result).toEqual({
        isError: true,
        output: expect.stringMatching(
          /\[browser\]\.chrome_instance_path names \/nonexistent\/chrome, which is not an executable file\. Install one — `apt-get install chromium`/,
        ),
      });
    } finally {
      await session.close();
    }
  });

  it('leaves no browser behind when the process exits, or is killed, without ending its runs', async () => {
    const dist = join(import.meta.dirname, '..', 'dist', 'index.js');
    const endings = { exit: 'process.exit(0)', kill: "process.kill(process.pid, 'SIGKILL')" };
    const ended = Object.entries(endings).map(async ([name, ending]) => {
      const marker = `${name}-${process.pid}-${Date.now()}`;
      const script = `
        import { toolSession } from '@openmanus/core/testing';
        import { createBrowserUse } from ${JSON.stringify(dist)};
        const tool = createBrowserUse({ allowHosts: [${JSON.stringify(site.host)}], extraChromiumArgs: ['--openmanus-test-marker=${marker}'] });
        const result = await toolSession(tool).call({ action: 'go_to_url', url: ${JSON.stringify(`${site.url}/`)} });
        console.log(result.isError ? 'error' : 'browsing');
        ${ending};
      `;
      const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
        cwd: join(import.meta.dirname, '..'),
      }).catch((error: { stdout: string }) => error);
      expect(stdout.trim()).toBe('browsing');
      await eventually(() => browsers(marker).length === 0);
    });
    await Promise.all(ended);
  });

  it('removes at the next start the profile a killed process left in the temporary directory: only its own', async () => {
    const dist = join(import.meta.dirname, '..', 'dist', 'index.js');
    const marker = `profile-${process.pid}-${Date.now()}`;
    const script = `
      import { toolSession } from '@openmanus/core/testing';
      import { createBrowserUse } from ${JSON.stringify(dist)};
      const tool = createBrowserUse({ allowHosts: [${JSON.stringify(site.host)}], extraChromiumArgs: ['--openmanus-test-marker=${marker}'] });
      const result = await toolSession(tool).call({ action: 'go_to_url', url: ${JSON.stringify(`${site.url}/`)} });
      console.log(result.isError ? 'error' : process.pid);
      process.kill(process.pid, 'SIGKILL');
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
      cwd: join(import.meta.dirname, '..'),
    }).catch((error: { stdout: string }) => error);
    const killed = Number(stdout.trim());
    expect(killed).toBeGreaterThan(0);
    await eventually(() => browsers(marker).length === 0);
    const profilesOf = async (pid: number) => {
      const found: string[] = [];
      for (const entry of await readdir(tmpdir())) {
        if (!entry.startsWith('playwright_chromiumdev_profile-')) continue;
        const owner = await readFile(join(tmpdir(), entry, 'openmanus-owner.json'), 'utf8').catch(() => '{}');
        if (JSON.parse(owner).pid === pid) found.push(entry);
      }
      return found;
    };
    const left = await profilesOf(killed);
    expect(left).toHaveLength(1);
    // A profile of no one's marking, and one of a process that lives (this one), are not touched.
    const unmarked = await mkdtemp(join(tmpdir(), 'playwright_chromiumdev_profile-'));
    const alive = await mkdtemp(join(tmpdir(), 'playwright_chromiumdev_profile-'));
    const started = (await readFile('/proc/self/stat', 'utf8')).split(') ')[1]?.split(' ')[19];
    await writeFile(join(alive, 'openmanus-owner.json'), JSON.stringify({ pid: process.pid, started }));
    const session = toolSession(ownBrowser(`${marker}-next`));
    try {
      expect((await session.call({ action: 'go_to_url', url: `${site.url}/` })).isError).toBe(false);
      expect(await profilesOf(killed)).toEqual([]);
      expect(existsSync(unmarked)).toBe(true);
      expect(existsSync(alive)).toBe(true);
    } finally {
      await session.close();
      await rm(unmarked, { recursive: true, force: true });
      await rm(alive, { recursive: true, force: true });
      for (const entry of left) await rm(join(tmpdir(), entry), { recursive: true, force: true });
    }
  });
});
