import { defineConfig } from 'vitest/config';

// The test set `pnpm mutate` (stryker.config.mjs) runs against mutated copies of
// packages/core/src/{kernel,shell}. Only @openmanus/core's tests: they import ../src, so no build is needed.
export default defineConfig({
  test: {
    include: ['packages/core/test/**/*.test.ts'],
    exclude: [
      '**/node_modules/**',
      // Runs the README snippet in a child `node` process that imports '@openmanus/core', i.e. packages/core/dist:
      // it needs a build, and would exercise the built code, never Stryker's mutated sources.
      'packages/core/test/readme.test.ts',
    ],
    setupFiles: ['./vitest.setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
