// The tool's other pure parts, without a browser: parameters per action, tab ids, extract chunks,
// the lock, download names, finding Chrome, and [browser] of config.toml as options.

import { err, ok } from '@openmanus/core';
import { describe, expect, it } from 'vitest';
import { ACTION_NAMES, browserUseParameters, parseAction } from '../src/actionSchema.js';
import { createBrowserUse } from '../src/browserUse.js';
import { chunkAt } from '../src/chunk.js';
import { safeFileName } from '../src/downloads.js';
import { CHROMIUM_ARGS, chromiumArgs, findChrome, STANDARD_CHROME_PATHS } from '../src/launch.js';
import { createLock } from '../src/lock.js';
import { browserOptionsFrom } from '../src/settings.js';
import { addTab, focusTab, noTabs, removeTab } from '../src/tabs.js';

const errorOf = (args: unknown) => {
  const parsed = parseAction(args);
  return parsed.isOk() ? 'no error' : parsed.error;
};

describe('browser_use parameters', () => {
  it("has OpenManus's 16 actions (and refresh) plus ours, in one flat schema with action required", () => {
    expect(ACTION_NAMES).toEqual(
      expect.arrayContaining([
        'go_to_url',
        'click_element',
        'input_text',
        'scroll_down',
        'scroll_up',
        'scroll_to_text',
        'send_keys',
        'get_dropdown_options',
        'select_dropdown_option',
        'go_back',
        'web_search',
        'wait',
        'extract_content',
        'switch_tab',
        'open_tab',
        'close_tab',
        'refresh',
        'get_current_state',
        'find',
        'hover',
        'handle_dialog',
        'upload_file',
        'screenshot',
      ]),
    );
    expect(browserUseParameters).toMatchObject({ type: 'object', required: ['action'] });
    const properties = (browserUseParameters as { properties: Record<string, unknown> }).properties;
    for (const name of ['url', 'ref', 'text', 'scroll_amount', 'tab_id', 'query', 'goal', 'keys', 'seconds']) {
      expect(properties, name).toHaveProperty(name);
    }
    expect(properties).not.toHaveProperty('index');
  });

  it('checks each action for its own parameters, naming the action and the parameter', () => {
    expect(errorOf({ action: 'click_element' })).toBe('click_element: ref is required.');
    expect(errorOf({ action: 'input_text', ref: 'e5' })).toBe('input_text: text is required.');
    expect(errorOf({ action: 'go_to_url', url: '' })).toMatch(/^go_to_url: url: Too small/);
    expect(errorOf({ action: 'click_element', ref: '#submit' })).toBe(
      'click_element: ref: expected a ref from the page state, such as e12 or f1e3.',
    );
    expect(errorOf({ action: 'switch_tab', tab_id: 'one' })).toMatch(
      /^switch_tab: tab_id: Invalid input: expected number/,
    );
    expect(errorOf({ action: 'fly' })).toMatch(/^Unknown action "fly": use one of go_to_url, click_element, /);
    expect(errorOf({})).toMatch(/^No action given: use one of /);
    expect(errorOf('click')).toBe('browser_use takes an object with an action');
  });

  it("points OpenManus's integer index to ref, and ignores parameters an action does not take", () => {
    expect(errorOf({ action: 'click_element', index: 3 })).toBe(
      "click_element takes ref (the element's ref from the page state, such as e12), not index.",
    );
    expect(parseAction({ action: 'go_back', url: null, ref: 'e1', seconds: 3 })).toEqual(ok({ action: 'go_back' }));
    expect(parseAction({ action: 'click_element', ref: 'f2e15' })).toEqual(
      ok({ action: 'click_element', ref: 'f2e15' }),
    );
  });

  it('is the schema the tool gives the model, and the tool validates with it', () => {
    const tool = createBrowserUse();
    expect(tool.spec.name).toBe('browser_use');
    expect(tool.spec.parameters).toEqual(browserUseParameters);
    expect(tool.parse({ action: 'hover' })).toEqual(err('hover: ref is required.'));
  });
});

describe('tab ids', () => {
  it('are stable: never reused, and closing a tab does not renumber the others', () => {
    let tabs = noTabs;
    for (let i = 0; i < 3; i++) tabs = addTab(tabs, false).tabs;
    expect(tabs).toEqual({ ids: [0, 1, 2], current: 0, nextId: 3 });
    tabs = removeTab(tabs, 1);
    const added = addTab(tabs, true);
    expect(added.id).toBe(3);
    expect(added.tabs).toEqual({ ids: [0, 2, 3], current: 3, nextId: 4 });
  });

  it('closing the current tab makes its neighbour current: the next one, else the one before', () => {
    const tabs = { ids: [0, 2, 3], current: 2, nextId: 4 };
    expect(removeTab(tabs, 2).current).toBe(3);
    expect(removeTab({ ...tabs, current: 3 }, 3).current).toBe(2);
    expect(removeTab({ ids: [5], current: 5, nextId: 6 }, 5)).toEqual({ ids: [], nextId: 6 });
    expect(removeTab(tabs, 9)).toBe(tabs);
  });

  it('switching to a tab that does not exist gives nothing', () => {
    expect(focusTab({ ids: [0, 2], current: 0, nextId: 3 }, 1)).toBeUndefined();
    expect(focusTab({ ids: [0, 2], current: 0, nextId: 3 }, 2)?.current).toBe(2);
  });
});

describe('chunkAt (extract_content)', () => {
  const text = Array.from({ length: 40 }, (_, i) => `Paragraph ${i} ${'word '.repeat(20).trim()}.`).join('\n\n');

  it('cuts at a paragraph end near the limit, and the next chunk starts where this one ended', () => {
    const first = chunkAt(text, 0, 1000);
    if ('error' in first) throw new Error(first.error);
    expect(first.text.length).toBeLessThanOrEqual(1000);
    expect(first.text.length).toBeGreaterThan(800);
    expect(first.text.endsWith('.\n\n')).toBe(true);
    expect(first).toMatchObject({ start: 0, end: first.text.length, total: text.length, more: true });
    const second = chunkAt(text, first.end, 1000);
    if ('error' in second) throw new Error(second.error);
    expect(second.text.startsWith('Paragraph')).toBe(true);
    let all = '';
    for (let start = 0; ; ) {
      const chunk = chunkAt(text, start, 1000);
      if ('error' in chunk) throw new Error(chunk.error);
      all += chunk.text;
      if (!chunk.more) break;
      start = chunk.end;
    }
    expect(all).toBe(text);
  });

  it('cuts hard when no boundary is near, and refuses a start past the end', () => {
    const first = chunkAt('x'.repeat(2500), 0, 1000);
    expect(first).toMatchObject({ start: 0, end: 1000, more: true });
    expect(chunkAt('short', 0, 1000)).toMatchObject({ text: 'short', more: false });
    expect(chunkAt('short', 9, 1000)).toEqual({
      error: 'start_from_char 9 is past the end of the content (5 characters)',
    });
  });
});

describe('createLock', () => {
  it('runs tasks one at a time, in order, and a failing one does not stop the next', async () => {
    const lock = createLock();
    const log: string[] = [];
    const task = (name: string, ms: number, fail = false) =>
      lock.run(async () => {
        log.push(`start ${name}`);
        await new Promise((resolve) => setTimeout(resolve, ms));
        log.push(`end ${name}`);
        if (fail) throw new Error(name);
        return name;
      });
    const results = await Promise.allSettled([task('a', 30), task('b', 1, true), task('c', 1)]);
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });
});

describe('safeFileName (downloads)', () => {
  it('keeps the last path segment, without path or control characters or leading dots', () => {
    expect(safeFileName('report.csv')).toBe('report.csv');
    expect(safeFileName('../../etc/passwd')).toBe('passwd');
    expect(safeFileName('..\\..\\boot.ini')).toBe('boot.ini');
    expect(safeFileName('.bashrc')).toBe('bashrc');
    expect(safeFileName('a\u0000b:c?.txt')).toBe('a_b_c_.txt');
    expect(safeFileName('..')).toBe('download');
    const long = safeFileName(`${'x'.repeat(300)}.pdf`);
    expect(long).toHaveLength(120);
    expect(long.endsWith('.pdf')).toBe(true);
  });
});

describe('findChrome', () => {
  const only =
    (...paths: string[]) =>
    (path: string) =>
      paths.includes(path);

  it('takes the configured browser, else CHROME_PATH, else the first standard place that has one', () => {
    expect(findChrome('/opt/c/chrome', { CHROME_PATH: '/x' }, only('/opt/c/chrome', '/x'))).toBe('/opt/c/chrome');
    expect(findChrome(undefined, { CHROME_PATH: '/x' }, only('/x', '/usr/bin/chromium'))).toBe('/x');
    expect(findChrome(undefined, {}, only('/usr/bin/google-chrome', '/usr/bin/chromium'))).toBe('/usr/bin/chromium');
    expect(STANDARD_CHROME_PATHS[0]).toBe('/usr/bin/chromium');
  });

  it('says how to install one when there is none, and names a configured path that is not there', () => {
    expect(() => findChrome(undefined, {}, only())).toThrow(
      /^No Chrome or Chromium found \(looked for CHROME_PATH and in \/usr\/bin\/chromium, .*\)\. Install one — `apt-get install chromium` on Debian\/Ubuntu, or `bash scripts\/setup\.sh` in OpenManus-TS/,
    );
    expect(() => findChrome('/nope/chrome', {}, only('/usr/bin/chromium'))).toThrow(
      /^\[browser\]\.chrome_instance_path names \/nope\/chrome, which is not an executable file\./,
    );
    expect(() => findChrome(undefined, { CHROME_PATH: '/nope' }, only('/usr/bin/chromium'))).toThrow(
      /^CHROME_PATH names \/nope/,
    );
  });

  it('always passes the quiet, no-GPU, no-QUIC switches; web security goes off only when asked', () => {
    const settings = { headless: true, disableSecurity: false, extraArgs: ['--lang=ja'] };
    expect(chromiumArgs(settings)).toEqual([...CHROMIUM_ARGS, '--lang=ja']);
    for (const flag of [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ]) {
      expect(CHROMIUM_ARGS).toContain(flag);
    }
    expect(chromiumArgs(settings)).not.toContain('--disable-web-security');
    expect(chromiumArgs({ ...settings, disableSecurity: true })).toContain('--disable-web-security');
  });
});

describe('browserOptionsFrom', () => {
  it("maps OpenManus's [browser] keys to options, and leaves out what is not set", () => {
    expect(
      browserOptionsFrom({
        headless: false,
        disable_security: true,
        extra_chromium_args: ['--lang=en'],
        chrome_instance_path: '/opt/chrome',
        cdp_url: 'http://127.0.0.1:9222',
        proxy: { server: 'http://proxy:3128', username: 'me', password: 'pw' },
        max_content_length: 2000,
        allow_hosts: ['127.0.0.1:8080'],
      }),
    ).toEqual({
      headless: false,
      disableSecurity: true,
      extraChromiumArgs: ['--lang=en'],
      chromeInstancePath: '/opt/chrome',
      cdpUrl: 'http://127.0.0.1:9222',
      proxy: { server: 'http://proxy:3128', username: 'me', password: 'pw' },
      maxContentLength: 2000,
      allowHosts: ['127.0.0.1:8080'],
    });
    expect(browserOptionsFrom({})).toEqual({});
    expect(browserOptionsFrom({ wss_url: 'ws://127.0.0.1:3000/' })).toEqual({ wssUrl: 'ws://127.0.0.1:3000/' });
  });

  it('refuses allowHosts mistakes when the tool is made, not at the first call', () => {
    expect(() => createBrowserUse({ allowHosts: ['http://x/'] })).toThrow(
      /^browser_use: allowHosts entry "http:\/\/x\/"/,
    );
  });
});
