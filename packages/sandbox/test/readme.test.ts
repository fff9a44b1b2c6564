// The README's snippet, run with node as a user would run it (against the built package:
// `pnpm -C packages/sandbox build` first) and a real daemon, printing what the README says; and
// the README's list of exports.
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { itListsTheExports, readmeOf, runSnippet } from '../../core/test/readmeCheck.js';
import { dockerReady, SETUP_TIMEOUT } from './docker.js';

const packageDir = join(import.meta.dirname, '..');
const { readme, block } = await readmeOf(packageDir);

describe('the README snippet runs and prints what the README shows', () => {
  beforeAll(dockerReady, SETUP_TIMEOUT);

  it('a Python script in a container, and no network there', async () => {
    const stdout = await runSnippet(packageDir, block('## Usage', 'ts'));
    expect(block('## Usage', 'text')).toContain('hello from linux');
    expect(stdout).toBe(block('## Usage', 'text'));
  });
});

describe('the README lists what the package exports', () => {
  itListsTheExports(packageDir, readme, () => import('../src/index.js'));
});
