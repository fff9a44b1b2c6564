import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { findChrome } from '@openmanus/browser';
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { demo } from '../src/demo.js';
import { tempDir } from './helpers.js';

interface Facts {
  sights: Record<string, { page: string; hours: string; fee: string; access: string }>;
  passes: Record<string, { page: string; price: string }>;
  events: Record<string, { page: string; when: string }>;
  emergency: Record<string, { page: string; number: string }>;
}

const facts = JSON.parse(
  await readFile(fileURLToPath(new URL('../demo/facts.json', import.meta.url)), 'utf8'),
) as Facts;

/** Text as a reader compares it: an en dash is a hyphen, `&amp;` is `&`, runs of space are one. */
const normal = (text: string) => text.replaceAll('–', '-').replaceAll('&amp;', '&').replace(/\s+/g, ' ');

/** Runs the demo in this process (so the site's request log can be read), with a clean environment. */
async function runDemo(cwd: string, env: Record<string, string> = {}) {
  const requested: string[] = [];
  const collect = () => {
    const stream = new PassThrough();
    let text = '';
    stream.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    return { stream, text: () => text };
  };
  const stdout = collect();
  const stderr = collect();
  const code = await demo(
    { stdin: Readable.from([]), stdout: stdout.stream, stderr: stderr.stream, env: { PATH: process.env.PATH, ...env } },
    cwd,
    { site: { onRequest: (method, url) => requested.push(`${method} ${url}`) } },
  );
  return { code, requested, stdout: stdout.text(), stderr: stderr.text() };
}

describe('pnpm demo with a browser', () => {
  it('offline: Manus researches the travel site in the real browser and writes a handbook with its facts', async () => {
    const cwd = await tempDir();
    const workspace = join(cwd, 'workspace', 'demo');
    const { code, requested, stdout, stderr } = await runDemo(cwd);
    expect(code, stderr).toBe(0);
    expect(stderr).toContain('offline: a local server replays recorded model replies; the tools really run.');
    expect(stderr).toMatch(
      /researches the bundled Kyoto travel site \(http:\/\/127\.0\.0\.1:\d+\/\) in a real browser/,
    );
    expect(stderr).toContain('Deliverables:\n  workspace/demo/handbook.html\n');
    expect(stderr).toContain(`Open the handbook: ${pathToFileURL(join(workspace, 'handbook.html')).href}`);
    expect(stdout).toContain(`${workspace}/handbook.html`);
    // Each browser action worked: no action's result is an error.
    expect(stderr).not.toMatch(/← (Error|refused)/);

    // The browser fetched the pages the model asked for, and what they load (the stylesheet).
    for (const page of [
      '/',
      '/sights/index.html',
      '/map.html',
      '/getting-around.html',
      '/seasons.html',
      '/practical.html',
    ])
      expect(requested).toContain(`GET ${page}`);
    expect(requested).toContain('GET /assets/style.css');

    const handbook = normal(await readFile(join(workspace, 'handbook.html'), 'utf8'));
    expect(handbook).toMatch(/^<!doctype html>/);
    for (const [name, sight] of Object.entries(facts.sights))
      for (const fact of [name, sight.hours, sight.fee, sight.access]) expect(handbook).toContain(normal(fact));
    for (const [name, pass] of Object.entries(facts.passes)) {
      expect(handbook).toContain(normal(name));
      expect(handbook).toContain(normal(pass.price));
    }
    for (const [name, event] of Object.entries(facts.events))
      expect(handbook).toContain(`${name}</td><td>${normal(event.when)}`);
    for (const [name, entry] of Object.entries(facts.emergency)) {
      expect(handbook).toContain(normal(name));
      expect(handbook).toContain(`<td>${entry.number}</td>`);
    }

    // A browser shows it as a page that lists the sights.
    const browser = await chromium.launch({ executablePath: findChrome(undefined, process.env) });
    try {
      const page = await browser.newPage();
      await page.goto(pathToFileURL(join(workspace, 'handbook.html')).href);
      expect(await page.title()).toBe('Kyoto travel handbook');
      const section = page.getByRole('region', { name: 'Top sights' });
      expect(await section.getByRole('heading', { level: 3 }).allTextContents()).toEqual(Object.keys(facts.sights));
      expect(await section.getByRole('listitem').count()).toBe(Object.keys(facts.sights).length);
      expect(await page.getByRole('row', { name: /Subway & Bus One-Day Pass/ }).textContent()).toContain('¥1,100');
    } finally {
      await browser.close();
    }
  });

  it('offline: a browser that cannot start is reported, not covered up by the recorded replies', async () => {
    const cwd = await tempDir();
    // An executable that is no browser: it is found, but every start fails.
    const { code, requested, stderr } = await runDemo(cwd, { CHROME_PATH: '/bin/false' });
    expect(requested).toEqual([]);
    expect(stderr).toContain('The browser never reached the travel site');
    expect(code).toBe(1);
  });
});
