import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const guard = fileURLToPath(new URL('../guard.mjs', import.meta.url));
const runGuarded = (code: string) =>
  promisify(execFile)(process.execPath, ['--import', guard, '-e', code]).then(
    ({ stdout }) => ({ code: 0, stdout, stderr: '' }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );

describe('the bench network guard', () => {
  it('ends the process when anything connects beyond this machine', async () => {
    for (const url of ['http://93.184.216.34/', 'http://example.com/']) {
      const result = await runGuarded(`fetch(${JSON.stringify(url)}).catch(() => {})`);
      expect(result.code).toBe(99);
      expect(result.stderr).toMatch(/^network guard: refused a connection to /);
    }
  });

  it('lets connections to 127.0.0.1 through', async () => {
    const result = await runGuarded(
      "const s = require('node:net').createServer((c) => c.end('hi')).listen(0, '127.0.0.1', () => fetch('http://127.0.0.1:' + s.address().port).catch(() => {}).finally(() => { console.log('local ok'); s.close(); }));",
    );
    expect(result).toMatchObject({ code: 0, stdout: 'local ok\n' });
  });
});
