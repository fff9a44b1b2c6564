// The README's snippets, run with node as a user would run them (against the built package:
// `pnpm -C packages/flow build` first), printing what the README says they print.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { itListsTheExports, readmeOf, runSnippet } from '../../core/test/readmeCheck.js';

const packageDir = join(import.meta.dirname, '..');
const { readme, block, blocks } = await readmeOf(packageDir);

describe('the README snippets run and print what the README shows', () => {
  it('planning: the tool in an agent run', async () => {
    expect(block('## `planning`', 'text')).toContain('[✓] Book flights');
    expect(await runSnippet(packageDir, block('## `planning`', 'ts'), { typescript: true })).toBe(
      block('## `planning`', 'text'),
    );
  });

  it('PlanningFlow: a flow of two executors, streamed', async () => {
    expect(block('## PlanningFlow', 'text')).toContain('step 1 (writer)');
    expect(await runSnippet(packageDir, block('## PlanningFlow', 'ts'), { typescript: true })).toBe(
      block('## PlanningFlow', 'text'),
    );
  });

  it("a flow's outcome and an agent run's are one shape: one report serves both", async () => {
    const heading = "### The same options and outcome as an agent's run";
    const [printed] = blocks(heading, 'text');
    expect(printed).toContain('LLM_AUTH');
    expect(await runSnippet(packageDir, block(heading, 'ts'), { typescript: true })).toBe(printed);
  });
  it('the reducer from the kernel entry: a flow decided without any I/O', async () => {
    const printed = block('### The reducer', 'text');
    expect(printed).toContain('callLlm');
    expect(await runSnippet(packageDir, block('### The reducer', 'ts'), { typescript: true })).toBe(printed);
  });
});

describe('the README lists what the package exports', () => {
  itListsTheExports(packageDir, readme, () => import('../src/index.js'), {
    typeKeyword: true,
    typeFiles: ['index.ts', 'kernel.ts'],
    entryPoints: { '- Kernel': () => import('../src/kernel.js') },
  });
});
