import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { toolSession } from '@openmanus/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFileSaver } from '../src/fileSaver.js';
import { tempWorkspace } from './helpers.js';

let ws: string;
let outside: string;
beforeEach(async () => {
  ws = await tempWorkspace();
  outside = await tempWorkspace();
});
afterEach(async () => {
  await rm(ws, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

const save = (args: Record<string, unknown>) => toolSession(createFileSaver({ workspace: ws })).call(args);

describe('file_saver', () => {
  it('saves to a path relative to the workspace, making the directories it needs', async () => {
    expect(await save({ content: '# Notes\n', file_path: 'reports/2025/notes.md' })).toEqual({
      output: `Content successfully saved to ${ws}/reports/2025/notes.md`,
      isError: false,
    });
    expect(await readFile(join(ws, 'reports/2025/notes.md'), 'utf8')).toBe('# Notes\n');
  });

  it('replaces the file by default, and appends with mode "a" (creating the file if needed)', async () => {
    await save({ content: 'a long first version\n', file_path: 'out.txt' });
    await save({ content: 'short\n', file_path: 'out.txt', mode: 'w' });
    expect(await readFile(join(ws, 'out.txt'), 'utf8')).toBe('short\n');
    await save({ content: 'more\n', file_path: 'out.txt', mode: 'a' });
    expect(await readFile(join(ws, 'out.txt'), 'utf8')).toBe('short\nmore\n');
    await save({ content: 'first line\n', file_path: 'log/new.txt', mode: 'a' });
    expect(await readFile(join(ws, 'log/new.txt'), 'utf8')).toBe('first line\n');
  });

  it('takes an absolute path inside the workspace', async () => {
    const path = join(ws, 'data', 'table.csv');
    expect((await save({ content: 'a,b\n1,2\n', file_path: path })).output).toBe(
      `Content successfully saved to ${path}`,
    );
    expect(await readFile(path, 'utf8')).toBe('a,b\n1,2\n');
  });

  it('works in the run’s workspace when it was given none', async () => {
    const session = toolSession(createFileSaver(), { workspace: ws });
    expect((await session.call({ content: 'x', file_path: 'here.txt' })).output).toBe(
      `Content successfully saved to ${ws}/here.txt`,
    );
  });

  it('refuses absolute paths outside the workspace and `..`, instead of saving under another name', async () => {
    const target = join(outside, 'evil.sh');
    expect(await save({ content: 'x', file_path: target })).toEqual({
      output: `Error: The path ${target} is outside the workspace ${ws}; only files inside it can be used.`,
      isError: true,
    });
    expect((await save({ content: 'x', file_path: '../escape.txt' })).output).toMatch(/is outside the workspace/);
    expect((await save({ content: 'x', file_path: '/etc/cron.d/job' })).output).toMatch(/is outside the workspace/);
    expect(await readdir(ws)).toEqual([]);
    expect(await readdir(outside)).toEqual([]);
  });

  it('does not follow links out of the workspace, even a dangling one that only leads out when written', async () => {
    await writeFile(join(outside, 'victim.txt'), 'ORIGINAL');
    await symlink(join(outside, 'victim.txt'), join(ws, 'link.txt'));
    await symlink(outside, join(ws, 'out'));
    await symlink(join(outside, 'planted.txt'), join(ws, 'dangling.txt'));
    for (const mode of ['w', 'a']) {
      expect((await save({ content: 'x', file_path: 'link.txt', mode })).output).toMatch(/outside the workspace/);
      expect((await save({ content: 'x', file_path: 'out/new.txt', mode })).output).toMatch(/outside the workspace/);
      // Its target does not exist, so the path checks out inside; the open itself refuses the link.
      expect(await save({ content: 'x', file_path: 'dangling.txt', mode })).toEqual({
        output: `Error: The path dangling.txt is, or goes through, a symbolic link to something missing or outside the workspace; it is not followed.`,
        isError: true,
      });
    }
    expect((await readdir(outside)).sort()).toEqual(['victim.txt']);
    expect(await readFile(join(outside, 'victim.txt'), 'utf8')).toBe('ORIGINAL');
  });

  it('writes through a link that stays inside the workspace', async () => {
    await writeFile(join(ws, 'real.txt'), 'old');
    await symlink(join(ws, 'real.txt'), join(ws, 'alias.txt'));
    expect((await save({ content: 'new', file_path: 'alias.txt' })).output).toBe(
      `Content successfully saved to ${ws}/real.txt`,
    );
    expect(await readFile(join(ws, 'real.txt'), 'utf8')).toBe('new');
  });

  it('refuses a directory, a named pipe (without hanging), an empty path and one with a NUL character', async () => {
    await mkdir(join(ws, 'dir'));
    execFileSync('mkfifo', [join(ws, 'pipe')]);
    expect((await save({ content: 'x', file_path: 'dir' })).output).toBe(
      'Error: The path dir is a directory; give a file name.',
    );
    for (const mode of ['w', 'a']) {
      expect((await save({ content: 'x', file_path: 'pipe', mode })).output).toBe(
        'Error: The path pipe is not a regular file (it is a named pipe).',
      );
    }
    expect((await save({ content: 'x', file_path: ' ' })).output).toBe(
      'Error: No file_path given: say where to save the content.',
    );
    expect(await save({ content: 'x', file_path: 'notes.md\0.sh' })).toEqual({
      output: 'Error: The path "notes.md\\u0000.sh" contains a NUL character.',
      isError: true,
    });
    expect((await save({ content: 'x', file_path: 'notes.md', mode: 'x' })).output).toMatch(
      /^Error: invalid arguments for file_saver:[\s\S]*mode/,
    );
    expect(existsSync(join(ws, 'notes.md'))).toBe(false);
  });
});
