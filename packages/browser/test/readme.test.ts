// The package README: its snippets run as written (the quick start against the fixture site, in a
// real Chromium), its list of exports matches the package both ways, and its links lead somewhere.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromePath } from './harness.js';
import { type Site, startSite } from './site.js';

const packageDir = join(import.meta.dirname, '..');
const readme = await readFile(join(packageDir, 'README.md'), 'utf8');
const chrome = chromePath();

/** The ```ts blocks of the section `## heading`, in order. */
function snippetsUnder(heading: string): string[] {
  const start = readme.indexOf(`\n## ${heading}\n`);
  if (start === -1) throw new Error(`the README has no section "## ${heading}"`);
  const end = readme.indexOf('\n## ', start + 1);
  return [...readme.slice(start, end === -1 ? undefined : end).matchAll(/```ts\n([\s\S]*?)```/g)].map(
    (m) => m[1] ?? '',
  );
}

/**
 * Runs a snippet as a module in a fresh directory inside the package (so that '@openmanus/browser'
 * and '@openmanus/core' resolve to the built packages, as for a user), with `files` beside it.
 */
async function runSnippet(code: string, files: Record<string, string> = {}): Promise<string> {
  const dir = await mkdtemp(join(packageDir, 'test', '.snippet-'));
  try {
    for (const [name, text] of Object.entries(files)) {
      await mkdir(join(dir, name, '..'), { recursive: true });
      await writeFile(join(dir, name), text);
    }
    await writeFile(join(dir, 'snippet.mjs'), code);
    const { stdout } = await promisify(execFile)(process.execPath, ['snippet.mjs'], {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? '',
        ...(process.env.CHROME_PATH ? { CHROME_PATH: process.env.CHROME_PATH } : {}),
      },
    });
    return stdout;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

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
      const [snippet = ''] = snippetsUnder('Quick start');
      // The snippet names a server on 127.0.0.1:8080; the fixture site is where the test put it.
      expect(snippet).toContain('127.0.0.1:8080');
      const stdout = await runSnippet(snippet.replaceAll('127.0.0.1:8080', site.host));
      const printed = stdout.replaceAll(site.host, 'HOST');
      expect(printed).toMatch(
        /^Navigated to http:\/\/HOST\/travel\/kyoto\.html\.\n\nURL: http:\/\/HOST\/travel\/kyoto\.html {3}Title: Kyoto: temples and gardens {3}\(HTTP 200\)\n/,
      );
      expect(printed).toContain('- heading "Kinkaku-ji" [level=2] [ref=e9]\n');
      expect(printed.slice(printed.indexOf('\n\n2 lines'))).toBe(
        [
          '',
          '',
          '2 lines on the page match the text "yen":',
          '- paragraph [ref=e10]: The Golden Pavilion opens at 9:00 and closes at 17:00. Entry costs 500 yen for adults.',
          '- paragraph [ref=e12]: The rock garden of fifteen stones opens at 8:00. Entry costs 600 yen.',
          '',
          'Kinkaku-ji costs 500 yen.',
          '',
        ].join('\n'),
      );
    },
  );

  it("the configuration snippet makes the tool from config.toml's [browser]", async () => {
    const [snippet = ''] = snippetsUnder('Configuration');
    const config =
      '[llm]\nmodel = "gpt-4o"\napi_key = "sk-test"\n\n[browser]\nheadless = true\nmax_content_length = 5000\n';
    expect(await runSnippet(snippet, { 'config/config.toml': config })).toBe('browser_use\n');
  });
});

it('the agents snippet makes the BrowserAgent and Manus with a browser', async () => {
  const [snippet = ''] = snippetsUnder('Agents');
  expect(await runSnippet(snippet)).toBe('browser python_execute str_replace_editor ask_human terminate browser_use\n');
});

describe('the README lists what the package exports', () => {
  const exports = readme.slice(readme.indexOf('\n## Exports\n'));
  const [runtime = '', types = ''] = exports.split('\nTypes ');
  const names = (text: string) => [...text.matchAll(/`([A-Za-z_$][\w$]*)`/g)].map((m) => m[1] ?? '');

  it('every runtime export is listed, and every listed name exists', async () => {
    const exported = Object.keys(await import('../src/index.js'));
    expect(names(runtime.slice(runtime.indexOf('\n- '))).sort()).toEqual(exported.sort());
  });

  it('every exported type is listed, and every listed type is exported', async () => {
    const index = await readFile(join(packageDir, 'src', 'index.ts'), 'utf8');
    const exported = [...index.matchAll(/export (type )?\{([^}]*)\}/g)].flatMap(([, allTypes, list = '']) =>
      list
        .split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry !== '' && (allTypes !== undefined || entry.startsWith('type ')))
        .map((entry) => entry.replace(/^type /, '')),
    );
    expect(exported.length).toBeGreaterThan(3);
    expect(names(types.slice(types.indexOf(':'))).sort()).toEqual(exported.sort());
  });

  it('links only to headings it has', () => {
    const anchors = [...readme.matchAll(/^#{2,3} (.+)$/gm)].map(([, heading = '']) =>
      heading
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/\s/g, '-'),
    );
    const links = [...readme.matchAll(/\]\(#([^)]+)\)/g)].map(([, anchor]) => anchor);
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) expect(anchors, link).toContain(link);
  });
});
