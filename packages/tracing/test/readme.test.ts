// The README's snippet, run with node as a user would run it (against the built package:
// `pnpm -C packages/tracing build` first), printing what the README says it prints.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { itListsTheExports, readmeOf, runSnippet } from '../../core/test/readmeCheck.js';
import { VERSION } from '../src/index.js';

const packageDir = join(import.meta.dirname, '..');
const { readme, block } = await readmeOf(packageDir);

describe('the README snippet runs and prints what the README shows', () => {
  it('tracing a run', async () => {
    expect(block('## Tracing a run', 'text')).toContain('chat scripted (120 in, 14 out)');
    expect(await runSnippet(packageDir, block('## Tracing a run', 'ts'), { typescript: true })).toBe(
      block('## Tracing a run', 'text'),
    );
  });

  it('runs that pause', async () => {
    expect(block('## Runs that pause', 'text')).toContain('  openmanus.wait (approval)');
    expect(await runSnippet(packageDir, block('## Runs that pause', 'ts'), { typescript: true })).toBe(
      block('## Runs that pause', 'text'),
    );
  });
});

describe('the README lists what the package exports', () => {
  itListsTheExports(packageDir, readme, () => import('../src/index.js'), { typeKeyword: true });

  it('VERSION is the package’s version', async () => {
    const pkg = JSON.parse(await readFile(join(packageDir, 'package.json'), 'utf8')) as { version: string };
    expect(VERSION).toBe(pkg.version);
  });
});
