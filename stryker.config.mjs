// Mutation testing for @openmanus/core's kernel (the pure reducer and its helpers) and shell (the interpreter).
// Run with `pnpm mutate`; it is slow, so it is not part of `pnpm test`.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  // Directories, not file lists, so that files added or split under kernel/ and shell/ are picked up.
  mutate: ['packages/core/src/kernel/**/*.ts', 'packages/core/src/shell/**/*.ts'],
  testRunner: 'vitest',
  // pnpm keeps Stryker in node_modules/.pnpm, where its default plugin lookup (`@stryker-mutator/*` next to
  // itself) does not see the runner: name it.
  plugins: ['@stryker-mutator/vitest-runner'],
  // Only the core tests (see vitest.mutate.config.ts for the one test file left out and why).
  vitest: { configFile: 'vitest.mutate.config.ts', related: true },
  coverageAnalysis: 'perTest',
  concurrency: 2,
  // Results are kept in reports/ so that a re-run only tests the mutants whose code or tests changed.
  incremental: true,
  incrementalFile: 'reports/mutation/stryker-incremental.json',
  reporters: ['progress', 'clear-text', 'json', 'html'],
  // The surviving mutants are in the HTML and JSON reports; the terminal gets the score table.
  clearTextReporter: { reportMutants: false, reportTests: false, allowEmojis: false },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  // Not needed by the core tests; keeps the sandbox copies small. packages/core/dist stays: one store test
  // runs a second writer in a child `node` process, which imports the built package (scripts/mutate.mjs builds it).
  ignorePatterns: ['examples', 'bench', 'workspace', 'coverage', '.turbo', 'test-results.json'],
  tempDirName: '.stryker-tmp',
  timeoutMS: 10_000,
};
