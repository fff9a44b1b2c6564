// The README's snippet, run with node as a user would run it (against the built package:
// `pnpm -C packages/durable build` first) on a throwaway Postgres, printing what the README shows.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { itListsTheExports, readmeOf, runSnippet } from '../../core/test/readmeCheck.js';
import { type Postgres, startPostgres } from './postgres.js';

const packageDir = join(import.meta.dirname, '..');
const { readme, block } = await readmeOf(packageDir);

let postgres: Postgres;
beforeAll(async () => {
  postgres = await startPostgres();
});
afterAll(() => postgres?.stop());

describe('the README snippet runs and prints what the README shows', () => {
  it('a worker and a client on one Postgres', async () => {
    const expected = block('## Workers and clients', 'text');
    expect(expected).toContain('finished - Hello from Postgres');
    const stdout = await runSnippet(packageDir, block('## Workers and clients', 'ts'), {
      nodeArgs: ['--no-deprecation'],
      env: { DATABASE_URL: postgres.url('openmanus_readme') },
    });
    expect(stdout).toBe(expected);
  });

  it('a durable flow: each step a run of its own', async () => {
    const expected = block('## Durable flows', 'text');
    expect(expected).toContain('kyoto/step-2 (researcher)');
    const stdout = await runSnippet(packageDir, block('## Durable flows', 'ts'), {
      typescript: true,
      nodeArgs: ['--no-deprecation'],
      env: { DATABASE_URL: postgres.url('openmanus_readme_flows') },
    });
    expect(stdout).toBe(expected);
  });
});

describe('the README snippet of the Postgres store', () => {
  it('checkpoints a run in Postgres', async () => {
    const expected = block('## A checkpoint store in Postgres', 'text');
    const stdout = await runSnippet(packageDir, block('## A checkpoint store in Postgres', 'ts'), {
      nodeArgs: ['--no-deprecation'],
      env: { DATABASE_URL: postgres.url('postgres') },
    });
    expect(stdout).toBe(expected);
  });
});

describe('the README lists what the package exports', () => {
  itListsTheExports(packageDir, readme, () => import('../src/index.js'));
});
