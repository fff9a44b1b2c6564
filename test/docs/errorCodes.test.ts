// The site's error-code page names every code of the family (packages/core/src/errors.ts), and no
// code that is not one.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const family = new Set(
  [...readFileSync(join(root, 'packages/core/src/errors.ts'), 'utf8').matchAll(/^\s*\| '([A-Z_]+)'/gm)].map(
    (m) => m[1],
  ),
);
const page = readFileSync(join(root, 'docs/src/content/docs/reference/error-codes.md'), 'utf8');
const documented = new Set([...page.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]));

it('documents every error code, and only those', () => {
  expect(family.size).toBeGreaterThan(50);
  expect([...documented].sort()).toEqual([...family].sort());
});
