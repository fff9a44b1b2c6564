// The site's planning-flow guide: its first example runs as written with node (a scripted model
// decides; the flow, its reducer and the agents are real) and prints what the page shows.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { markdownOf, runSnippet } from '../../core/test/readmeCheck.js';

const packageDir = join(import.meta.dirname, '..');
const guide = await markdownOf(
  join(packageDir, '..', '..', 'docs', 'src', 'content', 'docs', 'guides', 'planning-flow.md'),
);

describe('the planning-flow guide', () => {
  it('"A flow with two agents" runs as written and prints what the page shows', async () => {
    const [code] = guide.blocks('## A flow with two agents', 'ts');
    const [printed] = guide.blocks('## A flow with two agents', 'text');
    expect(printed).toContain('step 1 (writer)');
    const stdout = await runSnippet(packageDir, code ?? '', { typescript: true });
    expect(stdout).toBe(printed);
  });
});
