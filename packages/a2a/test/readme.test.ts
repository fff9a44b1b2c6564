// The README's snippet, run with node as a user would run it (against the built package:
// `pnpm -C packages/a2a build` first), printing what the README says it prints.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { itListsTheExports, readmeOf, runSnippet } from '../../core/test/readmeCheck.js';

const packageDir = join(import.meta.dirname, '..');
const { readme, block } = await readmeOf(packageDir);

describe('the README snippet runs and prints what the README shows', () => {
  it('serving an agent', async () => {
    expect(block('## Serving an agent', 'text')).toContain('TASK_STATE_COMPLETED Deployed the api.');
    expect(await runSnippet(packageDir, block('## Serving an agent', 'ts'), { typescript: true })).toBe(
      block('## Serving an agent', 'text'),
    );
  });
});

describe('the README lists what the package exports', () => {
  itListsTheExports(packageDir, readme, () => import('../src/index.js'), { typeKeyword: true });
});
