// The package README's snippets of the providers other than OpenAI, run with node as a user would
// (against the built package): each prints two lines, which the README quotes after it.
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { readmeOf, runSnippet } from './readmeCheck.js';

const packageDir = join(import.meta.dirname, '..');
const { readme, block } = await readmeOf(packageDir);

it.each([
  ['Anthropic', 'Hi! 12000 in (9000 read, 2000 written), $0.0207', 'system prompt cached: ephemeral'],
  ['Bedrock', 'Hi! 12000 in (9000 read, 2000 written), $0.0207', 'system prompt cached: default'],
  ['Any AI SDK model', 'Hi! 12000 in (9000 cached), $0.00242', 'Hello! (llama-3.1-8b)'],
])('the "%s" snippet runs as written and prints what the README says', async (section, first, second) => {
  const printed = await runSnippet(packageDir, block(`## ${section}`, 'ts'));
  expect(printed.trim().split('\n')).toEqual([first, second]);
  expect(readme).toContain(`prints \`${first}\`, then \`${second}\`.`);
});
