import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');

describe('the package README', () => {
  it('its snippet runs as written', async () => {
    const readme = await readFile(join(packageDir, 'README.md'), 'utf8');
    const snippet = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(snippet).toBeDefined();
    // Inside the package, so that '@openmanus/core' and 'zod' resolve as they do for a user; one directory per run.
    const dir = await mkdtemp(join(packageDir, 'test', '.snippet-'));
    const file = join(dir, 'readme.mjs');
    await writeFile(file, snippet ?? '');
    try {
      const { stdout } = await promisify(execFile)(process.execPath, [file]);
      expect(stdout).toBe('I said hi.\n');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the package README', () => {
  it('its record-and-replay snippet runs as written and prints what the README says', async () => {
    const readme = await readFile(join(packageDir, 'README.md'), 'utf8');
    const block = readme.slice(readme.indexOf('<!-- record:start -->'), readme.indexOf('<!-- record:end -->'));
    const snippet = /```ts\n([\s\S]*?)```/.exec(block)?.[1];
    expect(snippet).toBeDefined();
    const dir = await mkdtemp(join(packageDir, 'test', '.snippet-'));
    await writeFile(join(dir, 'record.mjs'), snippet ?? '');
    try {
      const { stdout } = await promisify(execFile)(process.execPath, ['record.mjs'], { cwd: dir });
      const [answer = '', error = ''] = stdout.split('\n');
      expect(answer).toBe('HI');
      expect(error).toMatch(/^the model request failed: bad_request: replay diverged at model call 1 of 2: /);
      expect(readme).toContain(`prints \`${answer}\`, then \`${error}\`.`);
      const saved = JSON.parse(await readFile(join(dir, 'shout.json'), 'utf8'));
      expect(saved).toMatchObject({ version: 1, model: 'scripted' });
      expect(saved.replies).toHaveLength(2);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the package README lists what the package exports', () => {
  const section = async () => {
    const readme = await readFile(join(packageDir, 'README.md'), 'utf8');
    const exports = readme.slice(readme.indexOf('## Exports'));
    const [listed = '', types = ''] = exports.split('Main types:');
    const names = (text: string) => [...text.matchAll(/`([A-Za-z_$][\w$]*)`/g)].map((m) => m[1] ?? '');
    const testing = listed.slice(listed.indexOf('- Testing'));
    return {
      main: names(listed.slice(0, listed.indexOf('- Testing'))),
      testing: names(testing),
      types: names(types),
    };
  };

  it('every runtime export is listed, and every listed name exists', async () => {
    const { main, testing } = await section();
    const core = Object.keys(await import('../src/index.js')).sort();
    const kit = Object.keys(await import('../src/testing/index.js')).sort();
    expect([...main].sort()).toEqual(core);
    expect([...testing].sort()).toEqual(kit);
  });

  it('the main types it names are exported', async () => {
    const { types } = await section();
    const read = (file: string) => readFile(join(packageDir, 'src', file), 'utf8');
    // index.ts and the kernel's index.ts (which it re-exports) hold nothing but exports: a name in them is exported.
    const index = (await read('index.ts')) + (await read('kernel/index.ts'));
    for (const name of types) expect(index, name).toMatch(new RegExp(`\\b${name}\\b`));
  });
});

describe('the root README', () => {
  it('its "Extending the kernel" snippet runs as written and prints what the README says', async () => {
    const readme = await readFile(join(packageDir, '..', '..', 'README.md'), 'utf8');
    const block = readme.slice(readme.indexOf('<!-- extending:start -->'), readme.indexOf('<!-- extending:end -->'));
    const snippet = /```ts\n([\s\S]*?)```/.exec(block)?.[1];
    expect(snippet).toBeDefined();
    const dir = await mkdtemp(join(packageDir, 'test', '.snippet-'));
    await writeFile(join(dir, 'extending.mjs'), snippet ?? '');
    try {
      const { stdout } = await promisify(execFile)(process.execPath, ['extending.mjs'], { cwd: dir });
      expect(stdout.split('\n')).toEqual([
        'awaiting_approval running-1-0/approval-1-0 census {"city":"Kyoto"}',
        'Kyoto: about 1.46 million people (2020 census).',
        '4 model calls, 2 metered for acme',
        '',
      ]);
      expect(readme).toContain('`4 model calls, 2 metered for acme`');
      const saved = await readFile(join(dir, 'runs', 'job-42.jsonl'), 'utf8');
      expect(saved.trim().split('\n').length).toBeGreaterThan(5);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
