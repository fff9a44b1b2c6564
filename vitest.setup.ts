// Every test file runs with a temporary directory of its own as TMPDIR, removed when the file
// ends: what a test (or the code it drives, or a process it starts) makes with os.tmpdir() is
// gone afterwards, even where a test forgets to remove it or is cut short.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const outer = tmpdir();
const dir = mkdtempSync(join(outer, 'openmanus-vitest-'));
// Sandboxed programs run as other uids (a per-call uid as root) and must reach their homes here.
chmodSync(dir, 0o755);
process.env.TMPDIR = dir;

afterAll(() => {
  process.env.TMPDIR = outer;
  rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});
