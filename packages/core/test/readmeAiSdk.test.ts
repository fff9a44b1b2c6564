// The package README's "Any AI SDK model" snippet, run with node as a user would (against the built package).
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { readmeOf, runSnippet } from './readmeCheck.js';

const packageDir = join(import.meta.dirname, '..');
const { readme, block } = await readmeOf(packageDir);

it('the AI SDK snippet runs as written and prints what the README says', async () => {
  const printed = await runSnippet(packageDir, block('## Any AI SDK model', 'ts'));
  const [gemini = '', other = ''] = printed.trim().split('\n');
  expect(gemini).toBe('Hi! 12000 in (9000 cached), $0.00242');
  expect(other).toBe('Hello! (llama-3.1-8b)');
  expect(readme).toContain(`prints \`${gemini}\`, then \`${other}\`.`);
});
