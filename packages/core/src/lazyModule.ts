import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);

/** A package's ES module build where this Node can require() one (20.19+, 22.12+), else its CommonJS build. */
function load(specifier: string): unknown {
  if (specifier.startsWith('node:')) return require(specifier);
  try {
    return require(fileURLToPath(import.meta.resolve(specifier)));
  } catch {
    return require(specifier);
  }
}

/**
 * A dependency loaded synchronously on first use instead of when the package is imported (zod
 * alone costs ~40 ms of a cold start). Loading the ES module build means that an instance the
 * application already imported is shared, not loaded a second time (the CommonJS build is a
 * second copy, ~5 MB).
 */
export function lazyModule<T>(specifier: string): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= load(specifier) as T;
    return loaded;
  };
}

/** zod, for our own schemas (tool arguments, config.toml); user schemas bring their own zod. */
export const loadZod = lazyModule<typeof import('zod')>('zod');

/** node:child_process, for the tools that start processes (its module costs ~1.5 MB at import). */
export const loadChildProcess = lazyModule<typeof import('node:child_process')>('node:child_process');

/**
 * A promise made on first use and shared after that: e.g. one of our own modules imported when
 * first needed, so code a run may never use (a tool's implementation, a store) stays out of the
 * process until it does.
 */
export function lazyPromise<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => {
    loaded ??= load();
    return loaded;
  };
}
