// The README's snippet, run with node as a user would run it (against the built package:
// `pnpm -C packages/durable build` first) on a throwaway Postgres, printing what the README shows.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Postgres, startPostgres } from './postgres.js';

const packageDir = join(import.meta.dirname, '..');
const readme = await readFile(join(packageDir, 'README.md'), 'utf8');

/** The first block of `lang` in the README section that starts with `heading`. */
function block(heading: string, lang: string): string {
  const start = readme.indexOf(`\n${heading}\n`);
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return section.match(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``))?.[1] ?? '';
}

let postgres: Postgres;
beforeAll(async () => {
  postgres = await startPostgres();
});
afterAll(() => postgres?.stop());

describe('the README snippet runs and prints what the README shows', () => {
  it('a worker and a client on one Postgres', async () => {
    const expected = block('## Workers and clients', 'text');
    expect(expected).toContain('finished - Hello from Postgres');
    // Inside the package, so that '@openmanus/durable' and '@openmanus/core' resolve as they do for a user.
    const dir = await mkdtemp(join(packageDir, 'test', '.snippet-'));
    try {
      await writeFile(join(dir, 'snippet.mjs'), block('## Workers and clients', 'ts'));
      const { stdout } = await promisify(execFile)(process.execPath, ['--no-deprecation', 'snippet.mjs'], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '', DATABASE_URL: postgres.url('openmanus_readme') },
      });
      expect(stdout).toBe(expected);
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
    const durable = Object.keys(await import('../src/index.js')).sort();
    expect([...names(listed)].sort()).toEqual(durable);
  });

  it('the main types it names are exported', async () => {
    const index = await readFile(join(packageDir, 'src', 'index.ts'), 'utf8');
    for (const name of names(types)) expect(index, name).toMatch(new RegExp(`\\b${name}\\b`));
  });
});
