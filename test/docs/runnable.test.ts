// Every block of the site marked ```ts run runs offline as written — with node, from a fresh
// directory inside docs/ (where the packages resolve as they do for a user), with a clean
// environment — and prints what the page shows when a ```text block follows it.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { blocksOf, markdownFiles, root } from '../../scripts/snippets.mjs';

const runnable = markdownFiles()
  .filter((name) => name.startsWith('docs/'))
  .flatMap((name) =>
    blocksOf(readFileSync(join(root, name), 'utf8'))
      .filter((block) => block.run)
      .map((block) => ({ where: `${name}:${block.line}`, ...block })),
  );

describe('the runnable blocks of the site', () => {
  it('are there', () => {
    expect(runnable.length).toBeGreaterThan(10);
  });

  it.each(runnable)('$where runs as written', { timeout: 300_000 }, async ({ code, prints }) => {
    const dir = await mkdtemp(join(root, 'docs', '.run-'));
    try {
      await writeFile(join(dir, 'snippet.mts'), code);
      const { stdout } = await promisify(execFile)(process.execPath, ['snippet.mts'], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '' },
        maxBuffer: 16 * 1024 * 1024,
      });
      if (prints !== undefined) expect(stdout.trimEnd()).toBe(prints.trimEnd());
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
