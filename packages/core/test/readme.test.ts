import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
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
    // Inside the package, so that '@openmanus/core' and 'zod' resolve as they do for a user.
    const dir = join(packageDir, 'test', '.snippet');
    await mkdir(dir, { recursive: true });
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
