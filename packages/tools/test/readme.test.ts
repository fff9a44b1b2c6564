// The package README as a whole: its table of tools and its list of exports match the package,
// and its links within the page lead to a heading. (Each section's snippets: readme*.test.ts.)
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { itLinksOnlyToItsHeadings, itListsTheExports, readmeOf } from '../../core/test/readmeCheck.js';
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

const packageDir = join(import.meta.dirname, '..');
const { readme } = await readmeOf(packageDir);
/** The names written as code in `text`. */
const names = (text: string) => [...text.matchAll(/`([A-Za-z_$][\w$]*)(?:\(\))?`/g)].map((m) => m[1] ?? '');

describe('the package README lists what the package exports', () => {
  itListsTheExports(packageDir, readme, () => import('../src/index.js'), { everyType: true });
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
  itLinksOnlyToItsHeadings(readme, 6);
});
