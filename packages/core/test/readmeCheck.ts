// What every package's README test does: run the README's snippets with node as a user would
// (against the built package), and check its `## Exports` list and its links against the package.
import { execFile } from 'node:child_process';
import { readdirSync, readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, expect, it } from 'vitest';

/**
 * The README in `dir`, and its code blocks of `lang` in the section that starts with the line
 * `heading` (the title, `## …` or `### …`; up to the next `## `), in order; `block` is the first.
 * A block's info string may go on after the language (```ts file=…).
 */
export async function readmeOf(dir: string) {
  return markdownOf(join(dir, 'README.md'));
}

/** The same for any markdown file: a page of the site (`docs/src/content/docs/…`) or a README. */
export async function markdownOf(file: string) {
  const readme = await readFile(file, 'utf8');
  const blocks = (heading: string, lang: string): string[] => {
    // A newline in front, so that the title on the first line is found like any heading.
    const text = `\n${readme}`;
    const start = text.indexOf(`\n${heading}\n`);
    if (start === -1) throw new Error(`${file} has no heading "${heading}"`);
    const end = text.indexOf('\n## ', start + 1);
    const section = text.slice(start, end === -1 ? undefined : end);
    return [...section.matchAll(new RegExp(`\`\`\`${lang}(?: [^\\n]*)?\\n([\\s\\S]*?)\`\`\``, 'g'))].map(
      (match) => match[1] ?? '',
    );
  };
  const block = (heading: string, lang: string): string => {
    const [first] = blocks(heading, lang);
    if (first === undefined) throw new Error(`${file} has no \`\`\`${lang} block under "${heading}"`);
    return first;
  };
  return { readme, block, blocks };
}

export interface SnippetOptions {
  /** The snippet's environment besides PATH (nothing else of the host's: no API key of yours). */
  readonly env?: Readonly<Record<string, string>>;
  /** Arguments to node before the snippet (e.g. `['--import', './preload.mjs']`, a file of `files`). */
  readonly nodeArgs?: readonly string[];
  /** Files written beside the snippet, by their path relative to it. */
  readonly files?: Readonly<Record<string, string>>;
  /** The snippet has type annotations: run as `snippet.mts`, node strips them. */
  readonly typescript?: boolean;
}

/** A fresh directory inside the package (where its imports resolve as they do for a user), by its real path, holding `files`. */
async function makeSnippetDir(packageDir: string, files: Readonly<Record<string, string>>): Promise<string> {
  const dir = await realpath(await mkdtemp(join(packageDir, 'test', '.snippet-')));
  for (const [name, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, name)), { recursive: true });
    await writeFile(join(dir, name), text);
  }
  return dir;
}

/** Runs `code` as `snippet.mjs` (`.mts`) with node in `dir`, its cwd, with a clean environment; resolves with what it printed. */
async function runIn(
  dir: string,
  code: string,
  { env = {}, nodeArgs = [], typescript }: SnippetOptions,
): Promise<string> {
  const file = typescript ? 'snippet.mts' : 'snippet.mjs';
  await writeFile(join(dir, file), code);
  const { stdout } = await promisify(execFile)(process.execPath, [...nodeArgs, file], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  return stdout;
}

/**
 * Runs `code` with node from a fresh directory inside the package, so that its imports resolve as
 * they do for a user, with a clean environment (PATH and `env` only); resolves with what it
 * printed. The directory is gone when it resolves (see `snippetRunner` to look into it).
 */
export async function runSnippet(packageDir: string, code: string, options: SnippetOptions = {}): Promise<string> {
  const dir = await makeSnippetDir(packageDir, options.files ?? {});
  try {
    return await runIn(dir, code, options);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * For a test file (called at its top): makes fresh directories inside the package holding `files`,
 * each removed when its test ends.
 */
export function snippetDirs(packageDir: string) {
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });
  return async (files: Readonly<Record<string, string>> = {}): Promise<string> => {
    const dir = await makeSnippetDir(packageDir, files);
    dirs.push(dir);
    return dir;
  };
}

/**
 * For a test file (called at its top): runs snippets as `runSnippet` does, but keeps each one's
 * directory (its cwd, where it wrote its files) until the test ends.
 */
export function snippetRunner(packageDir: string) {
  const snippetDir = snippetDirs(packageDir);
  return async (code: string, options: SnippetOptions = {}): Promise<{ dir: string; stdout: string }> => {
    const dir = await snippetDir(options.files);
    return { dir, stdout: await runIn(dir, code, options) };
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

export interface ExportsCheck {
  /** The index marks its type exports (`type Name`): a listed type is looked for as `type Name`. */
  readonly typeKeyword?: boolean;
  /** The types are all listed: every type the index exports is listed, not only every listed type exported. */
  readonly everyType?: boolean;
  /** Files under `src/` that hold nothing but exports, where a listed type must appear (default: `index.ts`). */
  readonly typeFiles?: readonly string[];
  /** Other entry points of the package, by how the list item naming their exports starts (e.g. `'- Testing'`). */
  readonly entryPoints?: Readonly<Record<string, () => Promise<object>>>;
}

/** The names written as code in `text`. */
const namesIn = (text: string) => [...text.matchAll(/`([A-Za-z_$][\w$]*)`/g)].map((match) => match[1] ?? '');

/**
 * The checks of a README's `## Exports` section: every runtime export (of the index, and of each
 * of `entryPoints`) is listed and every listed name exists; the types it names after `Main types:`
 * or `Types (…):` are exported (all of them and only them, when `everyType`).
 */
export function itListsTheExports(
  packageDir: string,
  readme: string,
  loadIndex: () => Promise<object>,
  { typeKeyword = false, everyType = false, typeFiles = ['index.ts'], entryPoints = {} }: ExportsCheck = {},
): void {
  const exportsSection = readme.slice(readme.indexOf('\n## Exports\n'));
  const typesAt = exportsSection.search(/\n(Main types|Types)\b[^:\n]*:/);
  const listed = exportsSection.slice(0, typesAt === -1 ? undefined : typesAt);
  const types = typesAt === -1 ? '' : exportsSection.slice(exportsSection.indexOf(':', typesAt) + 1);
  const items = listed.split(/\n(?=- )/);
  const entryPointOf = (item: string) => Object.keys(entryPoints).find((start) => item.startsWith(start));
  const read = (file: string) => readFile(join(packageDir, 'src', file), 'utf8');

  it('every runtime export is listed, and every listed name exists', async () => {
    const main = namesIn(items.filter((item) => entryPointOf(item) === undefined).join('\n'));
    expect([...main].sort()).toEqual(Object.keys(await loadIndex()).sort());
    for (const [start, load] of Object.entries(entryPoints)) {
      const names = namesIn(items.filter((item) => entryPointOf(item) === start).join('\n'));
      expect([...names].sort(), start).toEqual(Object.keys(await load()).sort());
    }
  });

  if (everyType) {
    it('every exported type is listed, and every listed type is exported', async () => {
      // `type X` inside `export { … }`, and all of `export type { … }`.
      const index = (await Promise.all(typeFiles.map(read))).join('\n');
      const exported = [...index.matchAll(/export (type )?\{([^}]*)\}/g)].flatMap(([, allTypes, list = '']) =>
        list
          .split(',')
          .map((entry) => entry.trim())
          .filter((entry) => entry !== '' && (allTypes !== undefined || entry.startsWith('type ')))
          .map((entry) => entry.replace(/^type /, '')),
      );
      expect(exported.length).toBeGreaterThan(0);
      expect([...namesIn(types)].sort()).toEqual(exported.sort());
    });
  } else {
    it('the main types it names are exported', async () => {
      // These files hold nothing but exports: a name in them is exported.
      const index = (await Promise.all(typeFiles.map(read))).join('\n');
      const prefix = typeKeyword ? 'type ' : '';
      expect(namesIn(types).length).toBeGreaterThan(0);
      for (const name of namesIn(types)) expect(index, name).toMatch(new RegExp(`\\b${prefix}${name}\\b`));
    });
  }
}

/** The check that a README's links within the page (at least `minLinks` of them) each lead to one of its headings. */
export function itLinksOnlyToItsHeadings(readme: string, minLinks = 1): void {
  it('links only to headings it has', () => {
    // GitHub's anchors: the heading in lower case, without punctuation, spaces as hyphens.
    const anchors = [...readme.matchAll(/^#{2,3} (.+)$/gm)].map(([, heading = '']) =>
      heading
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/\s/g, '-'),
    );
    const links = [...readme.matchAll(/\]\(#([^)]+)\)/g)].map(([, anchor]) => anchor);
    expect(links.length).toBeGreaterThanOrEqual(minLinks);
    for (const link of links) expect(anchors, link).toContain(link);
  });
}
