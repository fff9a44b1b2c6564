// The package README as a whole: its table of tools and its list of exports match the package,
// and its links within the page lead to a heading. (Each section's snippets: readme*.test.ts.)
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  createBash,
  createChatCompletionTool,
  createDataAnalysis,
  createDataVisualization,
  createFileSaver,
  createSandboxVision,
  createSweAgent,
  createVisualizationPreparation,
  createWebFetch,
  createWebSearch,
} from '../src/index.js';
import { packageDir, packageReadme } from './readmeSnippets.js';

const readme = await readFile(packageReadme, 'utf8');
/** The names written as code in `text`. */
const names = (text: string) => [...text.matchAll(/`([A-Za-z_$][\w$]*)(?:\(\))?`/g)].map((m) => m[1] ?? '');

describe('the package README lists what the package exports', () => {
  const exports = readme.slice(readme.indexOf('\n## Exports\n'));
  const [runtime = '', types = ''] = exports.split('\nTypes ');

  it('every runtime export is listed, and every listed name exists', async () => {
    const listed = names(runtime.slice(runtime.indexOf('\n- ')));
    const exported = Object.keys(await import('../src/index.js'));
    expect([...listed].sort()).toEqual(exported.sort());
  });

  it('every exported type is listed, and every listed type is exported', async () => {
    // index.ts holds nothing but exports: `type X` inside `export { … }`, and all of `export type { … }`.
    const index = await readFile(join(packageDir, 'src', 'index.ts'), 'utf8');
    const exported = [...index.matchAll(/export (type )?\{([^}]*)\}/g)].flatMap(([, allTypes, list = '']) =>
      list
        .split(',')
        .map((entry) => entry.trim())
        .filter((entry) => allTypes !== undefined || entry.startsWith('type '))
        .map((entry) => entry.replace(/^type /, '')),
    );
    expect(exported.length).toBeGreaterThan(20);
    expect([...names(types.slice(types.indexOf(':')))].sort()).toEqual(exported.sort());
  });
});

describe('the table at the top of the package README', () => {
  it('has a row for each tool the package makes and each preset, naming its factory', () => {
    const start = readme.search(/^\| Tool or preset +\|/m);
    const rows = readme
      .slice(start, readme.indexOf('\n\n', start))
      .split('\n')
      .slice(2)
      .map((row) => names(row.split(' | ')[0] ?? '').sort());
    const workspace = '/srv/data';
    const made = [
      [createBash().spec.name, 'createBash'],
      [createFileSaver().spec.name, 'createFileSaver'],
      [createWebSearch().spec.name, 'createWebSearch'],
      [createWebFetch().spec.name, 'createWebFetch'],
      [createChatCompletionTool().spec.name, 'createChatCompletionTool', 'createChatCompletion'],
      [createVisualizationPreparation({ workspace }).spec.name, 'createVisualizationPreparation'],
      [createDataVisualization({ workspace }).spec.name, 'createDataVisualization'],
      [createSandboxVision().spec.name, 'createSandboxVision'],
      [createSweAgent().config.name, 'createSweAgent'],
      [createDataAnalysis().config.name, 'createDataAnalysis'],
    ].map((row) => row.sort());
    expect(rows).toEqual(made);
  });
});

describe('the package README', () => {
  it('links only to headings it has', () => {
    // GitHub's anchors: the heading in lower case, without punctuation, spaces as hyphens.
    const anchors = [...readme.matchAll(/^#{2,3} (.+)$/gm)].map(([, heading = '']) =>
      heading
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/\s/g, '-'),
    );
    const links = [...readme.matchAll(/\]\(#([^)]+)\)/g)].map(([, anchor]) => anchor);
    expect(links.length).toBeGreaterThan(5);
    for (const link of links) expect(anchors, link).toContain(link);
  });
});
