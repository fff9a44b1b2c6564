// The package README's "Bedrock" snippet, run with node as a user would (against the built package).
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { readmeOf, runSnippet } from './readmeCheck.js';

const packageDir = join(import.meta.dirname, '..');
const { readme, block } = await readmeOf(packageDir);

it('the Bedrock snippet runs as written and prints what the README says', async () => {
  const printed = await runSnippet(packageDir, block('## Bedrock', 'ts'));
  const [usage = '', cache = ''] = printed.trim().split('\n');
  expect(usage).toBe('Hi! 12000 in (9000 read, 2000 written), $0.0207');
  expect(cache).toBe('system prompt cached: default');
  expect(readme).toContain(`prints \`${usage}\`, then \`${cache}\`.`);
});
