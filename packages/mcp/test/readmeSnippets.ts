// The README's snippets, found by their section and run as a user would run them.
import { execFile } from 'node:child_process';
import { readdirSync, readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach } from 'vitest';
import { packageDir } from './helpers.js';

export const packageReadme = join(packageDir, 'README.md');

/** The ```lang blocks of the section `## heading` of the README (up to the next `## `), in order. */
export async function blocksUnder(heading: string, lang: string): Promise<string[]> {
  const text = await readFile(packageReadme, 'utf8');
  const start = text.indexOf(`\n## ${heading}\n`);
  if (start === -1) throw new Error(`the README has no section "## ${heading}"`);
  const end = text.indexOf('\n## ', start + 1);
  const section = text.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((match) => match[1] ?? '');
}

/**
 * For a test file: makes fresh directories inside the package (so that '@openmanus/mcp' and
 * '@openmanus/core' resolve to the built packages as they do for a user) holding `files`; each is
 * removed when its test ends.
 */
export function snippetDirs() {
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });
  return async (files: Readonly<Record<string, string>>): Promise<string> => {
    const dir = await realpath(await mkdtemp(join(packageDir, 'test', '.snippet-')));
    dirs.push(dir);
    for (const [name, text] of Object.entries(files)) {
      await mkdir(dirname(join(dir, name)), { recursive: true });
      await writeFile(join(dir, name), text);
    }
    return dir;
  };
}

/** For a test file: runs a snippet as a module in a fresh directory (see `snippetDirs`), with `files` written beside it. */
export function snippetRunner() {
  const snippetDir = snippetDirs();
  return async (
    code: string,
    files: Readonly<Record<string, string>> = {},
  ): Promise<{ dir: string; stdout: string }> => {
    const dir = await snippetDir({ ...files, 'snippet.mjs': code });
    const { stdout } = await promisify(execFile)(process.execPath, ['snippet.mjs'], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '' },
    });
    return { dir, stdout };
  };
}

/** Pids of live processes working in `dir` (what a snippet started there and left behind). */
export function processesIn(dir: string): number[] {
  return readdirSync('/proc').flatMap((entry) => {
    try {
      return /^\d+$/.test(entry) && readlinkSync(`/proc/${entry}/cwd`) === dir ? [Number(entry)] : [];
    } catch {
      return []; // it ended while we looked, or is not ours to see
    }
  });
}
