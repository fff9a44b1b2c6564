import { readdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importGraphOf } from './importGraph.js';

const src = resolve(dirname(fileURLToPath(import.meta.url)), '../src');
const importGraph = (entry: string, options?: { dynamic?: boolean }) => importGraphOf(src, entry, options);

describe('the functional core', () => {
  const kernel = readdirSync(resolve(src, 'kernel')).filter((f) => f.endsWith('.ts') && f !== 'stateSchema.ts');

  it.each(kernel)('kernel/%s reaches no I/O: no node: module, no openai, nothing from the shell', (file) => {
    const { files, external } = importGraph(`kernel/${file}`);
    // The result shape and the error family are pure, and shared with the shell.
    expect(files.filter((f) => !f.startsWith('kernel/') && f !== 'result.ts' && f !== 'errors.ts')).toEqual([]);
    expect(files.some((f) => f.startsWith('testing/'))).toBe(false);
    expect(
      external.filter(
        (s) => s.startsWith('node:') || s === 'openai' || s.startsWith('openai/') || s === 'eventemitter3',
      ),
    ).toEqual([]);
    // Only neverthrow (the result shape, pure) and the tokenizer's rank data (loaded on demand) come from outside.
    expect(external.every((s) => s === 'neverthrow' || s.startsWith('js-tiktoken/'))).toBe(true);
  });

  it("the saved-state schema is the kernel's only use of a library (zod), loaded by the shell on demand", () => {
    expect(importGraph('kernel/stateSchema.ts').external.filter((s) => s.startsWith('node:'))).toEqual([]);
    expect(importGraph('index.ts', { dynamic: false }).files).not.toContain('kernel/stateSchema.ts');
  });

  it('importing the package loads the openai SDK, the tokenizer ranks, zod and the rest only on demand', () => {
    const eager = importGraph('index.ts', { dynamic: false }).external;
    expect(eager.filter((s) => s === 'openai' || s.startsWith('js-tiktoken'))).toEqual([]);
    // zod (~40 ms of a cold start), smol-toml, eventemitter3, the stream's event parser and node:child_process
    // load on first use (lazyModule.ts).
    const lazy = ['zod', 'smol-toml', 'eventemitter3', 'eventsource-parser', 'node:child_process', 'node:crypto'];
    expect(eager.filter((s) => lazy.includes(s))).toEqual([]);
    const all = importGraph('index.ts').external;
    expect(all).toContain('openai');
    expect(all).toContain('js-tiktoken/ranks/cl100k_base');
  });

  it('the graph check itself sees I/O where there is some', () => {
    expect(importGraph('shell/fileStore.ts').external).toContain('node:fs/promises');
    expect(importGraph('testing/server.ts').external).toContain('node:http');
  });
});
