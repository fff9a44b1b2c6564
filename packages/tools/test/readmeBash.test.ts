// The README's snippets for bash, file_saver and the SWE agent, run as written: each scripts its
// model and prints what the model reads, which is checked here.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readmeOf, snippetRunner } from '../../core/test/readmeCheck.js';

const packageDir = join(import.meta.dirname, '..');
const { blocks } = await readmeOf(packageDir);
const runSnippet = snippetRunner(packageDir);

describe('the README sections on bash, file_saver and the SWE agent', () => {
  it('bash: state carries over between calls, and stderr and the exit code are shown', async () => {
    const [bash = '', ...more] = blocks('## `bash`', 'ts');
    expect(more).toEqual([]);
    const { stdout } = await runSnippet(bash);
    expect(stdout).toBe(
      "debug in logs\n[stderr]\nls: cannot access 'missing': No such file or directory\n[exit code 2]\n",
    );
  });

  it('file_saver: writes and appends inside the workspace, and refuses a path outside it', async () => {
    const [fileSaver = '', ...more] = blocks('## `file_saver`', 'ts');
    expect(more).toEqual([]);
    const { dir, stdout } = await runSnippet(fileSaver);
    const saved = `Content successfully saved to ${dir}/workspace/notes/todo.md\n`;
    expect(stdout).toBe(
      `${saved}${saved}Error: The path /etc/cron.d/job is outside the workspace ${dir}/workspace; only files inside it can be used.\n`,
    );
    expect(await readFile(join(dir, 'workspace/notes/todo.md'), 'utf8')).toBe('- write tests\n- ship\n');
  });

  it('the SWE agent: creates, edits and runs a file, then terminates', async () => {
    const [swe = '', ...more] = blocks('## The SWE agent: `createSweAgent`', 'ts');
    expect(more).toEqual([]);
    const { dir, stdout } = await runSnippet(swe);
    expect(stdout).toBe('terminated "4\\n[exit code 0]"\n');
    expect(await readFile(join(dir, 'repo/add.py'), 'utf8')).toBe('print(2 + 2)\n');
  });
});
