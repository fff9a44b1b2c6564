// The READMEs' snippets, found by their section and run as a user would run them.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach } from 'vitest';

export const packageDir = join(import.meta.dirname, '..');
export const packageReadme = join(packageDir, 'README.md');
export const rootReadme = join(packageDir, '..', '..', 'README.md');

/** The ```ts blocks of the section `## heading` of a README (up to the next `## `), in order. */
export async function snippetsUnder(heading: string, readme = packageReadme): Promise<string[]> {
  const text = await readFile(readme, 'utf8');
  const start = text.indexOf(`\n## ${heading}\n`);
  if (start === -1) throw new Error(`${readme} has no section "## ${heading}"`);
  const end = text.indexOf('\n## ', start + 1);
  const section = text.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
}

export interface SnippetOptions {
  /** The snippet's environment besides PATH (nothing else of the host's: no API key of yours). */
  readonly env?: Readonly<Record<string, string>>;
  /** Files written beside the snippet, by name. */
  readonly files?: Readonly<Record<string, string>>;
  /** One of `files`, imported before the snippet (`node --import`). */
  readonly preload?: string;
}

/**
 * For a test file (called at its top): `runSnippet` runs a snippet as a module in a fresh directory
 * inside the package, so that '@openmanus/tools' and '@openmanus/core' resolve to the built packages
 * as they do for a user; the directory is its cwd, and is removed when the test ends.
 */
export function snippetRunner() {
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });
  return async (code: string, options: SnippetOptions = {}): Promise<{ dir: string; stdout: string }> => {
    const dir = await realpath(await mkdtemp(join(packageDir, 'test', '.snippet-')));
    dirs.push(dir);
    for (const [name, text] of Object.entries(options.files ?? {})) await writeFile(join(dir, name), text);
    await writeFile(join(dir, 'snippet.mjs'), code);
    const preload = options.preload === undefined ? [] : ['--import', join(dir, options.preload)];
    const { stdout } = await promisify(execFile)(process.execPath, [...preload, 'snippet.mjs'], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', ...options.env },
    });
    return { dir, stdout };
  };
}
