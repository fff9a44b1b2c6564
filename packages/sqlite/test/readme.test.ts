// The README's snippet, run with node as a user would run it (against the built package:
// `pnpm -C packages/sqlite build` first), printing what the README says it prints.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

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
  it('a run saved in SQLite, paused, answered from another store on the file, listed and pruned', async () => {
    // Inside the package, so that '@openmanus/sqlite' and '@openmanus/core' resolve as they do for a user.
    const dir = await mkdtemp(join(packageDir, 'test', '.snippet-'));
    try {
      await writeFile(join(dir, 'snippet.mjs'), block('## Usage', 'ts'));
      const { stdout } = await promisify(execFile)(process.execPath, ['snippet.mjs'], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '' },
      });
      expect(block('## Usage', 'text')).toContain('deploy-42 5 finished');
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
    const sqlite = Object.keys(await import('../src/index.js')).sort();
    expect([...names(listed)].sort()).toEqual(sqlite);
  });

  it('the main types it names are exported', async () => {
    // index.ts holds nothing but exports: a name in it is exported.
    const index = await readFile(join(packageDir, 'src', 'index.ts'), 'utf8');
    for (const name of names(types)) expect(index, name).toMatch(new RegExp(`\\b${name}\\b`));
  });
});
