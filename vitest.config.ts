import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'packages/*/test/**/*.test.ts',
      'examples/*/test/**/*.test.ts',
      'bench/test/**/*.test.ts',
      'test/**/*.test.ts',
    ],
    // Each test file's TMPDIR is its own, removed when the file ends (nothing is left in /tmp).
    setupFiles: ['./vitest.setup.ts'],
    // A backstop for a hung test only: on a loaded 2-core machine a slow test must not fail for it.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // CI reads the counts from the JSON report to print its "N passed, N failed" line.
    reporters: process.env.CI ? ['default', 'json'] : ['default'],
    outputFile: { json: 'test-results.json' },
  },
});
