// The package README: its snippets run as written (the quick start against the fixture site, in a
// real Chromium), its list of exports matches the package both ways, and its links lead somewhere.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { itLinksOnlyToItsHeadings, itListsTheExports, readmeOf, runSnippet } from '../../core/test/readmeCheck.js';
import { chromePath } from './harness.js';
import { type Site, startSite } from './site.js';

const packageDir = join(import.meta.dirname, '..');
const { readme, block } = await readmeOf(packageDir);
const chrome = chromePath();

/** Runs a snippet as the user would (see `runSnippet`), with the Chrome the tests use. */
const runWithChrome = (code: string, files: Record<string, string> = {}) =>
  runSnippet(packageDir, code, {
    files,
    env: process.env.CHROME_PATH ? { CHROME_PATH: process.env.CHROME_PATH } : {},
  });

describe('the README snippets', () => {
  let site: Site;
  beforeAll(async () => {
    site = await startSite();
  });
  afterAll(() => site.close());

  it('need the built package', () => {
    expect(existsSync(join(packageDir, 'dist', 'index.js')), 'run pnpm -C packages/browser build').toBe(true);
  });

  it.skipIf(!chrome)(
    'the quick start browses the page and finds the prices, as the model would read them',
    async () => {
      const snippet = block('## Quick start', 'ts');
      // The snippet names a server on 127.0.0.1:8080; the fixture site is where the test put it.
      expect(snippet).toContain('127.0.0.1:8080');
      const stdout = await runWithChrome(snippet.replaceAll('127.0.0.1:8080', site.host));
      const printed = stdout.replaceAll(site.host, 'HOST');
      expect(printed).toMatch(
        /^Navigated to http:\/\/HOST\/travel\/kyoto\.html\.\n\n<page_content untrusted="true">\nURL: http:\/\/HOST\/travel\/kyoto\.html {3}Title: Kyoto: temples and gardens {3}\(HTTP 200\)\n/,
      );
      expect(printed).toContain('- heading "Kinkaku-ji" [level=2] [ref=e9]\n');
      expect(printed.slice(printed.indexOf('\n\n2 lines'))).toBe(
        [
          '',
          '',
          '2 lines on the page match the text "yen":',
          '<page_content untrusted="true">',
          '- paragraph [ref=e10]: The Golden Pavilion opens at 9:00 and closes at 17:00. Entry costs 500 yen for adults.',
          '- paragraph [ref=e12]: The rock garden of fifteen stones opens at 8:00. Entry costs 600 yen.',
          '</page_content>',
          '',
          'Kinkaku-ji costs 500 yen.',
          '',
        ].join('\n'),
      );
    },
  );

  it("the configuration snippet makes the tool from config.toml's [browser]", async () => {
    const snippet = block('## Configuration', 'ts');
    const config =
      '[llm]\nmodel = "gpt-4o"\napi_key = "sk-test"\n\n[browser]\nheadless = true\nmax_content_length = 5000\n';
    expect(await runWithChrome(snippet, { 'config/config.toml': config })).toBe('browser_use\n');
  });
});

it('the agents snippet makes the BrowserAgent and Manus with a browser', async () => {
  const snippet = block('## Agents', 'ts');
  expect(await runWithChrome(snippet)).toBe(
    'browser python_execute str_replace_editor ask_human terminate browser_use\n',
  );
});

describe('the README lists what the package exports', () => {
  itListsTheExports(packageDir, readme, () => import('../src/index.js'), { everyType: true });
  itLinksOnlyToItsHeadings(readme);
});
