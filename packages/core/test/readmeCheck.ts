// What every package's README test does: run a snippet with node as a user would (against the
// built package), and check the `## Exports` list against the package's index.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

/** A package's README, and the first block of `lang` in the section that starts with `heading`. */
export async function readmeOf(packageDir: string) {
  const readme = await readFile(join(packageDir, 'README.md'), 'utf8');
  const block = (heading: string, lang: string): string => {
    const start = readme.indexOf(`\n${heading}\n`);
    const end = readme.indexOf('\n## ', start + 1);
    const section = readme.slice(start, end < 0 ? undefined : end);
    return section.match(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``))?.[1] ?? '';
  };
  return { readme, block };
}

/**
 * Runs `code` with node from a directory inside the package, so that its imports resolve as they
 * do for a user, with a clean environment (PATH and `env` only); resolves with what it printed.
 */
export async function runSnippet(
  packageDir: string,
  code: string,
  { env = {}, nodeArgs = [] }: { env?: Record<string, string>; nodeArgs?: string[] } = {},
): Promise<string> {
  const dir = await mkdtemp(join(packageDir, 'test', '.snippet-'));
  try {
    await writeFile(join(dir, 'snippet.mjs'), code);
    const { stdout } = await promisify(execFile)(process.execPath, [...nodeArgs, 'snippet.mjs'], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', ...env },
    });
    return stdout;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The two checks of a README's `## Exports` section: every runtime export is listed and every
 * listed name exists; the main types it names appear in `src/index.ts` (as `type Name` when
 * `typeKeyword`, for an index that marks its type exports).
 */
export function itListsTheExports(
  packageDir: string,
  readme: string,
  loadIndex: () => Promise<object>,
  { typeKeyword = false }: { typeKeyword?: boolean } = {},
): void {
  const exportsSection = readme.slice(readme.indexOf('## Exports'));
  const [listed = '', types = ''] = exportsSection.split('Main types:');
  const names = (text: string) => [...text.matchAll(/`([A-Za-z_$][\w$]*)`/g)].map((m) => m[1] ?? '');

  it('every runtime export is listed, and every listed name exists', async () => {
    const exported = Object.keys(await loadIndex()).sort();
    expect([...names(listed)].sort()).toEqual(exported);
  });

  it('the main types it names are exported', async () => {
    // index.ts holds nothing but exports: a name in it is exported.
    const index = await readFile(join(packageDir, 'src', 'index.ts'), 'utf8');
    const prefix = typeKeyword ? 'type ' : '';
    for (const name of names(types)) expect(index, name).toMatch(new RegExp(`\\b${prefix}${name}\\b`));
  });
}
