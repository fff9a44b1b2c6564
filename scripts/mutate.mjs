// `pnpm mutate [stryker options]`: builds core, runs Stryker (stryker.config.mjs) with the options given, e.g. `--force` for a
// full run despite the incremental file, then prints the one-line score from the JSON report.
import { spawnSync } from 'node:child_process';

const build = spawnSync('pnpm', ['-C', 'packages/core', 'build'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
const stryker = spawnSync('stryker', ['run', ...process.argv.slice(2)], { stdio: 'inherit' });
if (stryker.error) throw stryker.error;
if (stryker.status !== 0) process.exit(stryker.status ?? 1);
await import('./mutation-score.mjs');
