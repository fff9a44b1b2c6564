// The README's `planning` snippet, run with node as a user would run it (against the built package:
// `pnpm -C packages/flow build` first), printing what its README says it prints.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const packageDir = join(import.meta.dirname, '..');
const readme = await readFile(join(packageDir, 'README.md'), 'utf8');
const section = readme.slice(readme.indexOf('\n## `planning`\n'));
const block = (lang: string) => section.match(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``))?.[1] ?? '';

describe('the README section on planning', () => {
  it('runs its snippet, which prints what the README shows', async () => {
    // Inside the package, so that '@openmanus/flow' and '@openmanus/core' resolve as they do for a user.
    const dir = await mkdtemp(join(packageDir, 'test', '.snippet-'));
    try {
      await writeFile(join(dir, 'snippet.mjs'), block('ts'));
      const { stdout } = await promisify(execFile)(process.execPath, ['snippet.mjs'], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '' },
      });
      expect(block('text')).toContain('[✓] Book flights');
      expect(stdout).toBe(block('text'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
