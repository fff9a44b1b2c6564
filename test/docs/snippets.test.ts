// Every TypeScript block of the READMEs and the site's pages type-checks under strict,
// exactOptionalPropertyTypes and noUncheckedIndexedAccess, or is a fragment on purpose, or shows a
// file it equals; and the check itself catches what it is for.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { blocksOf, checkSnippets, markdownFiles, root } from '../../scripts/snippets.mjs';

const page = (text: string) => ({ name: 'docs/src/content/docs/guides/__check.md', text });

describe('the snippet check', () => {
  it('passes for every README and page', () => {
    const files = markdownFiles();
    expect(files).toContain('README.md');
    expect(files).toContain('packages/core/README.md');
    expect(files.some((file) => file.startsWith('docs/src/content/docs/'))).toBe(true);
    const { checked, failures } = checkSnippets(
      files.map((name) => ({ name, text: readFileSync(join(root, name), 'utf8') })),
    );
    expect(checked).toBeGreaterThan(50);
    expect(Object.fromEntries(failures)).toEqual({});
  });

  it('reports a block that does not compile under the strict settings, by file and line', () => {
    const text = [
      '# A page',
      '',
      '```ts',
      "import { createAgent } from '@openmanus/core';",
      'const list: string[] = [];',
      'const first: string = list[0];', // noUncheckedIndexedAccess: string | undefined
      "createAgent({ name: 'x', systemPrompt: 'y', tools: [], maxSteps: undefined });",
      '```',
      '',
      '```ts fragment',
      'notDeclaredAnywhere();',
      '```',
    ].join('\n');
    const { checked, failures } = checkSnippets([page(text)]);
    expect(checked).toBe(1);
    const messages = failures.get('docs/src/content/docs/guides/__check.md:3')?.join('\n') ?? '';
    expect(messages).toMatch(/\+3: Type 'string \| undefined' is not assignable to type 'string'/);
    expect(failures.size).toBe(1); // the fragment is not checked
  });

  it('resolves the packages from docs/, as a user who installed them would', () => {
    const text =
      "```ts\nimport { run } from '@openmanus/core';\nimport { createSqliteStore } from '@openmanus/sqlite';\nimport { z } from 'zod';\nexport { run, createSqliteStore, z };\n```\n";
    expect(Object.fromEntries(checkSnippets([page(text)]).failures)).toEqual({});
  });

  it('holds a block shown from a file to the file, or to one region of it', () => {
    const source = readFileSync(join(root, 'scripts/check-snippets.mjs'), 'utf8').trimEnd();
    const same = `\`\`\`ts file=scripts/check-snippets.mjs\n${source}\n\`\`\`\n`;
    expect(checkSnippets([page(same)]).failures.size).toBe(0);
    const drifted = `\`\`\`ts file=scripts/check-snippets.mjs\n${source.replace('exits 1', 'exits 2')}\n\`\`\`\n`;
    expect([...checkSnippets([page(drifted)]).failures.values()].flat().join()).toMatch(
      /differs from scripts\/check-snippets.mjs/,
    );
    const noRegion = '```ts file=scripts/check-snippets.mjs#nowhere\nx\n```\n';
    expect([...checkSnippets([page(noRegion)]).failures.values()].flat().join()).toMatch(/has no region nowhere/);
  });

  it('reads what a runnable block prints from the text block after it', () => {
    const [block] = blocksOf('```ts run\nconsole.log(1)\n```\n\nIt prints:\n\n```text\n1\n```\n');
    expect(block).toMatchObject({ run: true, prints: '1' });
  });

  it('reads the info string of each block', () => {
    const blocks = blocksOf('```ts\na\n```\n\n```ts fragment\nb\n```\n\n```ts file=x.ts#r\nc\n```\n\n```sh\nd\n```\n');
    expect(blocks).toEqual([
      { line: 1, code: 'a', fragment: false, file: undefined, run: false, prints: undefined },
      { line: 5, code: 'b', fragment: true, file: undefined, run: false, prints: undefined },
      { line: 9, code: 'c', fragment: false, file: 'x.ts#r', run: false, prints: undefined },
    ]);
  });
});
