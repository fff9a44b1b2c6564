// The runtime import graph of a source file, for purity tests (core's kernel, other packages' reducers).
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

// `import type` is erased at compile time, so it is not part of the runtime graph.
const IMPORT = /(?:import|export)\s(?!type\s)[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Every module `entry` (relative to `src`) reaches through its imports, with the bare specifiers it names. */
export function importGraphOf(src: string, entry: string, { dynamic = true } = {}) {
  const files = new Set<string>();
  const external = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      if (!dynamic && match[2]) continue;
      const spec = match[1] ?? match[2] ?? '';
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
      else external.add(spec);
    }
  };
  visit(resolve(src, entry));
  return { files: [...files].map((f) => f.slice(src.length + 1)), external: [...external] };
}
