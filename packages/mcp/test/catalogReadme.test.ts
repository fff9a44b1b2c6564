// The README section "Resources, prompts and completion": its snippet runs as written, inside the
// package (so that '@openmanus/mcp', the SDK and zod resolve as they do for a user), and prints
// what the README says.
import { describe, expect, it } from 'vitest';
import { readmeOf, snippetRunner } from '../../core/test/readmeCheck.js';
import { packageDir } from './helpers.js';

const { blocks } = await readmeOf(packageDir);
const runSnippet = snippetRunner(packageDir);

describe('the README section "Resources, prompts and completion"', () => {
  it('lists, reads, completes, gets a prompt and hears of an update, as it prints', async () => {
    const heading = '## Resources, prompts and completion';
    const [code = '', ...moreCode] = blocks(heading, 'ts');
    const [printed = '', ...morePrinted] = blocks(heading, 'text');
    expect([moreCode, morePrinted]).toEqual([[], []]);
    const { stdout } = await runSnippet(code, { typescript: true });
    expect(stdout).toBe(printed);
  });
});
