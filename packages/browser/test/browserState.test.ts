// The compact page state of each fixture page against its golden file (UPDATE_GOLDEN=1 rewrites
// them), and the token budget on the 500-row page.
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadTokenizer, textTokens } from '@openmanus/core/kernel';
import { describe, expect, it } from 'vitest';
import { browserHarness, chromePath } from './harness.js';

const chrome = chromePath();
const goldenDir = join(import.meta.dirname, 'golden');

/** The fixture pages, by golden file name. */
const PAGES: Record<string, (xport: number) => string> = {
  home: () => '/',
  'page-two': () => '/page2.html',
  'frames-and-shadow': (xport) => `/frames.html?xport=${xport}`,
  spa: () => '/spa.html',
  overlay: () => '/overlay.html',
  'slow-xhr': () => '/slow.html',
  selects: () => '/selects.html',
  'rows-500': () => '/rows.html',
  'not-found': () => '/missing.html',
  'travel-kyoto': () => '/travel/kyoto.html',
};

describe.skipIf(!chrome)('the page state of each fixture page', () => {
  const h = browserHarness(chrome ?? '');

  for (const [name, path] of Object.entries(PAGES)) {
    it(`${name} matches test/golden/${name}.txt`, async () => {
      const run = await h.run();
      await run.ok({ action: 'go_to_url', url: h.site.url + path(h.xsite.port) });
      const state = h.normalize(await run.ok({ action: 'get_current_state' }));
      const file = join(goldenDir, `${name}.txt`);
      if (process.env.UPDATE_GOLDEN || !existsSync(file)) {
        if (process.env.CI) throw new Error(`${file} is missing: run the tests with UPDATE_GOLDEN=1 and commit it`);
        await mkdir(goldenDir, { recursive: true });
        await writeFile(file, `${state}\n`);
      }
      expect(`${state}\n`).toBe(await readFile(file, 'utf8'));
    });
  }

  it('the 500-row page: at most 2,000 tokens anywhere on it, and under a tenth of the full AI snapshot', async () => {
    await loadTokenizer('o200k_base');
    const run = await h.run();
    const states = [await run.ok({ action: 'go_to_url', url: `${h.site.url}/rows.html` })];
    for (const amount of [800, 4000, 8000]) states.push(await run.ok({ action: 'scroll_down', scroll_amount: amount }));
    const page = await h.browser.newPage();
    try {
      await page.goto(`${h.site.url}/rows.html`);
      const full = textTokens(await page.ariaSnapshot({ mode: 'ai' }), 'o200k_base');
      for (const state of states) {
        const tokens = textTokens(state, 'o200k_base');
        expect(tokens).toBeLessThanOrEqual(2000);
        expect(tokens).toBeLessThan(full / 10);
      }
    } finally {
      await page.close();
    }
    expect(states.at(-1)).toMatch(/\[\d+ more interactive elements above; scroll_up\]/);
  });
});
