// The README's snippet, run with node as a user would run it (against the built package:
// `pnpm -C packages/sqlite build` first), printing what the README says it prints.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { itListsTheExports, readmeOf, runSnippet } from '../../core/test/readmeCheck.js';

const packageDir = join(import.meta.dirname, '..');
const { readme, block } = await readmeOf(packageDir);

describe('the README snippet runs and prints what the README shows', () => {
  it('a run saved in SQLite, paused, answered from another store on the file, listed and pruned', async () => {
    const stdout = await runSnippet(packageDir, block('## Usage', 'ts'), { typescript: true });
    expect(block('## Usage', 'text')).toContain('deploy-42 5 finished');
    expect(stdout).toBe(block('## Usage', 'text'));
  });
});

describe('the README lists what the package exports', () => {
  itListsTheExports(packageDir, readme, () => import('../src/index.js'));
});
