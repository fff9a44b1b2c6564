import { execFile } from 'node:child_process';
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The TypeScript snippets of the README's bash, file_saver and SWE agent sections, in order. */
async function snippets(): Promise<string[]> {
  const readme = await readFile(join(packageDir, 'README.md'), 'utf8');
  const block = readme.slice(
    readme.indexOf('<!-- bash-file_saver-swe:start -->'),
    readme.indexOf('<!-- bash-file_saver-swe:end -->'),
  );
  return [...block.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
}

/** Runs a snippet as a user would (the package resolves by its name; built first) in a fresh directory. */
async function runSnippet(code: string): Promise<{ dir: string; stdout: string }> {
  const dir = await realpath(await mkdtemp(join(packageDir, 'test', '.snippet-')));
  await writeFile(join(dir, 'snippet.mjs'), code);
  const { stdout } = await promisify(execFile)(process.execPath, ['snippet.mjs'], { cwd: dir });
  return { dir, stdout };
}

describe('the README sections on bash, file_saver and the SWE agent', () => {
  it('has one snippet each, and each runs as written and prints what its comments say', async () => {
    const [bash = '', fileSaver = '', swe = ''] = await snippets();
    expect(await snippets()).toHaveLength(3);
    const dirs: string[] = [];
    try {
      const shell = await runSnippet(bash);
      dirs.push(shell.dir);
      expect(shell.stdout).toBe(
        "debug in logs\n[stderr]\nls: cannot access 'missing': No such file or directory\n[exit code 2]\n",
      );

      const saver = await runSnippet(fileSaver);
      dirs.push(saver.dir);
      const saved = `Content successfully saved to ${saver.dir}/workspace/notes/todo.md\n`;
      expect(saver.stdout).toBe(
        `${saved}${saved}Error: The path /etc/cron.d/job is outside the workspace ${saver.dir}/workspace; only files inside it can be used.\n`,
      );
      expect(await readFile(join(saver.dir, 'workspace/notes/todo.md'), 'utf8')).toBe('- write tests\n- ship\n');

      const agent = await runSnippet(swe);
      dirs.push(agent.dir);
      expect(agent.stdout).toBe('terminated "4\\n[exit code 0]"\n');
      expect(await readFile(join(agent.dir, 'repo/add.py'), 'utf8')).toBe('print(2 + 2)\n');
    } finally {
      await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
    }
  });
});
