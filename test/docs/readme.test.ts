// The root README a newcomer finishes: at most 200 lines, its example runs as written (an agent
// with a zod tool, run and checked against the scripted model), and every link of it leads to a
// file of the repository (the site's pages among them).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { markdownOf, runSnippet } from '../../packages/core/test/readmeCheck.js';

const root = join(import.meta.dirname, '..', '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');

describe('the root README', () => {
  it('is at most 200 lines, with the two set-up commands first', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(200);
    const setUp = readme.indexOf('bash scripts/setup.sh');
    expect(setUp).toBeGreaterThan(0);
    expect(readme.indexOf('pnpm demo')).toBeGreaterThan(setUp);
    expect(readme.indexOf('pnpm test')).toBeGreaterThan(setUp);
  });

  it('runs its example as written: the tool is called, the model sees its result, the answer is printed', async () => {
    const { block } = await markdownOf(join(root, 'README.md'));
    const code = block('## An agent, run and tested', 'ts');
    // From a directory of the quickstart example, whose dependencies are a user's: core and zod.
    const printed = await runSnippet(join(root, 'examples', 'quickstart'), code, { typescript: true });
    expect(printed).toMatch(/^About 1\.46 million\. \{/);
    expect(printed).toContain('llmCalls: 2');
  });

  it('links only to files that exist', () => {
    const links = [...readme.matchAll(/\]\(([^)#]+)(?:#[^)]*)?\)/g)].map(([, target = '']) => target);
    const local = links.filter((target) => !/^[a-z]+:/.test(target));
    expect(local.length).toBeGreaterThan(20);
    for (const target of local) expect(existsSync(join(dirname(join(root, 'README.md')), target)), target).toBe(true);
  });
});
