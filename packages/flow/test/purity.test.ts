import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importGraphOf } from '../../core/test/importGraph.js';

const src = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

describe("the flow's functional core", () => {
  it.each(['kernel.ts', 'flowStep.ts', 'flowState.ts', 'flowPrompts.ts', 'plans.ts'])(
    '%s reaches no I/O: only itself, the pure kernel of core, and zod',
    (file) => {
      const { files, external } = importGraphOf(src, file);
      const pure = ['kernel.ts', 'flowStep.ts', 'flowState.ts', 'flowPrompts.ts', 'plans.ts'];
      expect(files.filter((f) => !pure.includes(f))).toEqual([]);
      expect(external.filter((s) => s !== '@openmanus/core/kernel' && s !== 'zod')).toEqual([]);
    },
  );

  it('the check itself sees the shell where it is', () => {
    const { external } = importGraphOf(src, 'runFlow.ts');
    expect(external).toContain('@openmanus/core');
  });
});
