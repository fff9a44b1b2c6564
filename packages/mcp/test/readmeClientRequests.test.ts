// The README section on elicitation, sampling, roots, resources and prompts (client): its snippet
// runs as written, inside the package (our server and our client over HTTP on 127.0.0.1).
import { describe, expect, it } from 'vitest';
import { readmeOf, snippetRunner } from '../../core/test/readmeCheck.js';
import { packageDir } from './helpers.js';

const { blocks } = await readmeOf(packageDir);
const runSnippet = snippetRunner(packageDir);
const SECTION = '## Elicitation, sampling, roots, resources and prompts (client)';

describe(`the README section "${SECTION.slice(3)}"`, () => {
  it("answers a server's question and sampling request from a run, and prints what it says", async () => {
    const [code = '', ...more] = blocks(SECTION, 'ts');
    const [printed = ''] = blocks(SECTION, 'text');
    expect(more).toEqual([]);
    expect((await runSnippet(code, { typescript: true })).stdout).toBe(printed);
  });
});
