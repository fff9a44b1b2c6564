// The README's snippet, run with node as a user would run it (against the built package:
// `pnpm -C packages/sandbox build` first) and a real daemon, printing what the README says; and
// the README's list of exports.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { dockerReady, SETUP_TIMEOUT } from './docker.js';

const packageDir = join(import.meta.dirname, '..');
const readme = await readFile(join(packageDir, 'README.md'), 'utf8');

/** The first block of `lang` in the README section that starts with `heading`. */
function block(heading: string, lang: string): string {
  const start = readme.indexOf(`\n${heading}\n`);
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return section.match(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``))?.[1] ?? '';
}

describe('the README snippet runs and prints what the README shows', () => {
  beforeAll(dockerReady, SETUP_TIMEOUT);

  it('a Python script in a container, and no network there', async () => {
    // Inside the package, so that '@openmanus/sandbox' resolves as it does for a user.
    const dir = await mkdtemp(join(packageDir, 'test', '.snippet-'));
    try {
      await writeFile(join(dir, 'snippet.mjs'), block('## Usage', 'ts'));
      const { stdout } = await promisify(execFile)(process.execPath, ['snippet.mjs'], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '' },
      });
      expect(block('## Usage', 'text')).toContain('hello from linux');
      expect(stdout).toBe(block('## Usage', 'text'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the README lists what the package exports', () => {
  const exportsSection = readme.slice(readme.indexOf('## Exports'));
  const [listed = '', types = ''] = exportsSection.split('Main types:');
  const names = (text: string) => [...text.matchAll(/`([A-Za-z_$][\w$]*)`/g)].map((m) => m[1] ?? '');

  it('every runtime export is listed, and every listed name exists', async () => {
    const sandbox = Object.keys(await import('../src/index.js')).sort();
    expect([...names(listed)].sort()).toEqual(sandbox);
  });

  it('the main types it names are exported', async () => {
    // index.ts holds nothing but exports: a name in it is exported.
    const index = await readFile(join(packageDir, 'src', 'index.ts'), 'utf8');
    for (const name of names(types)) expect(index, name).toMatch(new RegExp(`\\b${name}\\b`));
  });
});
