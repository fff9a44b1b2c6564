// The package README's "Usage and cost" snippet, run with node as a user would (against the built package).
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { readmeOf, runSnippet } from './readmeCheck.js';

const packageDir = join(import.meta.dirname, '..');
const { readme, block } = await readmeOf(packageDir);

it('the usage-and-cost snippet runs as written and prints what the README says', async () => {
  const printed = await runSnippet(packageDir, block('## Usage and cost', 'ts'));
  expect(printed).toBe('12000 in (9000 cached), 500 out, $0.0027\n');
  expect(readme).toContain(`prints \`${printed.trim()}\`.`);
});
