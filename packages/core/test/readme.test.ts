// The package README's snippets and the site's "Extending the kernel" (concepts/reducer), run with node as a
// user would run them (against the built package: `pnpm -C packages/core build` first), printing
// what the README says; and the README's list of exports.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { itListsTheExports, markdownOf, readmeOf, runSnippet, snippetRunner } from './readmeCheck.js';

const packageDir = join(import.meta.dirname, '..');
const { readme, block, blocks } = await readmeOf(packageDir);
const reducerPage = await markdownOf(
  join(packageDir, '..', '..', 'docs', 'src', 'content', 'docs', 'concepts', 'reducer.md'),
);
const runKeepingFiles = snippetRunner(packageDir);

describe('the package README', () => {
  it('its snippet runs as written', async () => {
    expect(await runSnippet(packageDir, block('# @openmanus/core', 'ts'))).toBe('I said hi.\n');
  });

  it('its record-and-replay snippet runs as written and prints what the README says', async () => {
    const { dir, stdout } = await runKeepingFiles(block('## Record and replay', 'ts'), { typescript: true });
    const [answer = '', error = ''] = stdout.split('\n');
    expect(answer).toBe('HI');
    expect(error).toMatch(/^the model request failed: bad_request: replay diverged at model call 1 of 2: /);
    expect(readme).toContain(`prints \`${answer}\`, then \`${error}\`.`);
    const saved = JSON.parse(await readFile(join(dir, 'shout.json'), 'utf8'));
    expect(saved).toMatchObject({ version: 1, model: 'scripted' });
    expect(saved.replies).toHaveLength(2);
  });
});

describe('the package README on policies', () => {
  it('its snippets run as written and print what the README says', async () => {
    const [rules = '', ownPolicy = ''] = blocks('## Policies', 'ts');
    const printed = (await runSnippet(packageDir, rules)).trim();
    expect(printed).toBe('stepLimit, tokenBudget, stuck, terminalTools 3');
    expect(readme).toContain(`prints \`${printed}\``);
    const counted = (await runSnippet(packageDir, ownPolicy, { typescript: true })).trim();
    expect(counted).toBe('max_steps 3 Enough.');
    expect(readme).toContain(`prints \`${counted}\``);
  });
});

describe('the package README: errors', () => {
  it('its snippet runs as written: a rate limit comes back as a coded error, misuse throws', async () => {
    const printed = await runSnippet(packageDir, block('## Errors', 'ts'));
    const [limited = '', refused = ''] = printed.split('\n');
    expect(limited).toBe('failed: rate limited (HTTP 429), try again later');
    expect(refused).toBe('InvalidStateError RUN_NOT_WAITING');
    expect(readme).toContain(`prints \`${limited}\`, then \`${refused}\`.`);
  });

  it('its result snippet runs as written: match, isOk() and unwrapOr', async () => {
    const [, results = ''] = blocks('## Errors', 'ts');
    const printed = (await runSnippet(packageDir, results, { typescript: true })).trim().split('\n');
    expect(printed).toEqual(['said Hello!', 'auth (HTTP 401)', 'gpt-4o-mini']);
    expect(readme).toContain('prints `said Hello!`, `auth (HTTP 401)`, then `gpt-4o-mini`.');
    expect(results).not.toContain('_unsafeUnwrap');
  });

  it('its table of run error codes names every code of the family that is not thrown only', async () => {
    const errors = await readFile(join(packageDir, 'src', 'errors.ts'), 'utf8');
    const group = (name: string) => {
      const start = errors.indexOf(`export type ${name} =`);
      return [...errors.slice(start, errors.indexOf(';', start)).matchAll(/'([A-Z_]+)'/g)].map((m) => m[1]);
    };
    const section = readme.slice(readme.indexOf('\n## Errors\n'), readme.indexOf('\n## Saved states and answers\n'));
    for (const code of [...group('LlmFailureCode'), ...group('RunStopCode')]) expect(section).toContain(`\`${code}\``);
  });
});

describe('the package README: agents and flows, one outcome', () => {
  it('its snippet runs as written and prints what the README says', async () => {
    const printed = await runSnippet(packageDir, block('## Agents and flows: one outcome', 'ts'), { typescript: true });
    const [finished = '', failed = ''] = printed.split('\n');
    expect([finished, failed]).toEqual(['finished (answered): Hello.', 'failed (error): LLM_AUTH']);
    expect(readme).toContain(`prints \`${finished}\`, then \`${failed}\`.`);
  });
});

describe('the package README lists what the package exports', () => {
  itListsTheExports(packageDir, readme, () => import('../src/index.js'), {
    // Each entry's index holds nothing but exports.
    typeFiles: ['index.ts', 'kernel/index.ts', 'internal/index.ts'],
    entryPoints: {
      '- Kernel': () => import('../src/kernel/index.js'),
      '- Testing': () => import('../src/testing/index.js'),
      '- Internal': () => import('../src/internal/index.js'),
    },
  });
});

describe('the internal entry', () => {
  it('says at its top and in the README that it is internal, unstable and not covered by semver', async () => {
    const top = (await readFile(join(packageDir, 'src', 'internal', 'index.ts'), 'utf8')).split('\n\n')[0] ?? '';
    expect(top).toMatch(/^\/\/ @openmanus\/core\/internal: /);
    expect(top).toMatch(/INTERNAL AND UNSTABLE/);
    expect(top).toMatch(/not covered by semver/);
    const row = readme.split('\n').find((line) => line.startsWith('| `@openmanus/core/internal` |')) ?? '';
    expect(row).toMatch(/internal and unstable: not covered by semver/);
  });
});

describe("the site's page on the reducer", () => {
  it('its "Extending the kernel" snippet runs as written and prints what the page says', async () => {
    const { dir, stdout } = await runKeepingFiles(reducerPage.block('## Extending the kernel', 'ts'), {
      typescript: true,
    });
    expect(stdout.split('\n')).toEqual([
      'awaiting_approval running-1-0/approval-1-0 census {"city":"Kyoto"}',
      'Kyoto: about 1.46 million people (2020 census).',
      '4 model calls, 2 metered for acme',
      '',
    ]);
    expect(reducerPage.readme).toContain('`4 model calls, 2 metered for acme`');
    const saved = await readFile(join(dir, 'runs', 'job-42.jsonl'), 'utf8');
    expect(saved.trim().split('\n').length).toBeGreaterThan(5);
  });
});
