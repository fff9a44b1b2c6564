import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { type ToolSession, toolSession } from '../src/testing/toolSession.js';
import { createStrReplaceEditor } from '../src/tools/strReplaceEditor.js';
import { tempWorkspace } from './toolHelpers.js';

let ws: string;
let session: ToolSession;
const edit = (args: Record<string, unknown>) => session.call(args);

beforeEach(async () => {
  ws = await tempWorkspace();
  session = toolSession(createStrReplaceEditor({ workspace: ws }));
});

describe('str_replace_editor', () => {
  it('creates a file, refuses to overwrite it, and views it with line numbers', async () => {
    const path = join(ws, 'notes', 'a.txt');
    expect(await edit({ command: 'create', path, file_text: 'one\ntwo\nthree' })).toEqual({
      output: `File created successfully at: ${path}`,
      isError: false,
    });
    expect((await edit({ command: 'create', path, file_text: 'x' })).output).toBe(
      `Error: File already exists at: ${path}. Cannot overwrite files using command \`create\`.`,
    );
    expect((await edit({ command: 'view', path })).output).toBe(
      `Here's the result of running \`cat -n\` on ${path}:\n     1\tone\n     2\ttwo\n     3\tthree\n`,
    );
    expect((await edit({ command: 'view', path, view_range: [2, -1] })).output).toContain('     2\ttwo\n     3\tthree');
    expect((await edit({ command: 'view', path, view_range: [5, 6] })).output).toMatch(
      /Invalid `view_range`.*\[1, 3\]/,
    );
  });

  it('lists a directory two levels deep without hidden entries', async () => {
    await mkdir(join(ws, 'a', 'b', 'c'), { recursive: true });
    await writeFile(join(ws, '.secret'), 'x');
    await writeFile(join(ws, 'a', 'b', 'c', 'deep.txt'), 'x');
    const { output } = await edit({ command: 'view', path: ws });
    expect(output).toContain(`up to 2 levels deep in ${ws}, excluding hidden items:`);
    expect(output).toContain(join(ws, 'a', 'b'));
    expect(output).not.toContain('.secret');
    expect(output).not.toContain('c/deep.txt');
  });

  it('replaces exactly one occurrence and shows the edited snippet', async () => {
    const path = join(ws, 'f.py');
    await writeFile(path, 'a = 1\nb = 2\nc = 3\n');
    const { output, isError } = await edit({ command: 'str_replace', path, old_str: 'b = 2', new_str: 'b = 20' });
    expect(isError).toBe(false);
    expect(output).toContain(`The file ${path} has been edited.`);
    expect(output).toContain('     2\tb = 20');
    expect(await readFile(path, 'utf8')).toBe('a = 1\nb = 20\nc = 3\n');
  });

  it('refuses a missing or repeated old_str with the count and line numbers', async () => {
    const path = join(ws, 'g.txt');
    await writeFile(path, 'x\ny\nx\n');
    expect((await edit({ command: 'str_replace', path, old_str: 'zzz', new_str: '' })).output).toBe(
      `Error: No replacement was performed, old_str \`zzz\` did not appear verbatim in ${path}.`,
    );
    expect((await edit({ command: 'str_replace', path, old_str: 'x', new_str: 'q' })).output).toBe(
      'Error: No replacement was performed. Multiple occurrences (2) of old_str `x` in lines 1, 3. Please ensure it is unique.',
    );
  });

  it('inserts after a line (0 = top) and validates the line', async () => {
    const path = join(ws, 'h.txt');
    await writeFile(path, 'b\nc');
    await edit({ command: 'insert', path, insert_line: 0, new_str: 'a' });
    await edit({ command: 'insert', path, insert_line: 3, new_str: 'd' });
    expect(await readFile(path, 'utf8')).toBe('a\nb\nc\nd');
    expect((await edit({ command: 'insert', path, insert_line: 9, new_str: 'z' })).output).toMatch(
      /within the range of lines of the file: \[0, 4\]/,
    );
  });

  it('undoes edits one by one, and undoing a create removes the file', async () => {
    const path = join(ws, 'u.txt');
    await edit({ command: 'create', path, file_text: 'v1' });
    await edit({ command: 'str_replace', path, old_str: 'v1', new_str: 'v2' });
    await edit({ command: 'undo_edit', path });
    expect(await readFile(path, 'utf8')).toBe('v1');
    expect((await edit({ command: 'undo_edit', path })).output).toBe(
      `Undid the creation of ${path}: the file was removed.`,
    );
    expect((await edit({ command: 'view', path })).output).toBe(
      `Error: The path ${path} does not exist. Please provide a valid path.`,
    );
    expect((await edit({ command: 'undo_edit', path: ws })).isError).toBe(true);
  });

  it('clips long output with a marker', async () => {
    const path = join(ws, 'big.txt');
    await writeFile(path, 'y'.repeat(20_000));
    const { output } = await edit({ command: 'view', path });
    expect(output).toContain('<response clipped>');
    expect(output.length).toBeLessThan(16_400);
  });

  it('refuses relative paths, paths outside the workspace, .. and symlinks that leave it', async () => {
    expect((await edit({ command: 'view', path: 'rel.txt' })).output).toBe(
      'Error: The path rel.txt is not an absolute path.',
    );
    expect((await edit({ command: 'view', path: '/etc/passwd' })).output).toMatch(
      /^Error: The path \/etc\/passwd is outside the workspace/,
    );
    expect((await edit({ command: 'create', path: join(ws, '..', 'escape.txt'), file_text: 'x' })).output).toMatch(
      /outside the workspace/,
    );
    await symlink('/etc', join(ws, 'link'));
    expect((await edit({ command: 'view', path: join(ws, 'link', 'passwd') })).output).toMatch(/outside the workspace/);
    expect((await edit({ command: 'create', path: join(ws, 'link', 'new.txt'), file_text: 'x' })).output).toMatch(
      /outside the workspace/,
    );
  });

  it('refuses files too large to read whole', async () => {
    const path = join(ws, 'huge.log');
    await writeFile(path, Buffer.alloc(11 * 1024 * 1024, 'a'));
    expect((await edit({ command: 'view', path })).output).toBe(
      `Error: The file ${path} is 11.0 MB, too large for this editor (limit 10 MB). Inspect it with python_execute.`,
    );
  });

  it('makes a workspace that does not exist yet on first use', async () => {
    const fresh = join(ws, 'not', 'yet');
    const path = join(fresh, 'a.txt');
    const result = await toolSession(createStrReplaceEditor({ workspace: fresh })).call({
      command: 'create',
      path,
      file_text: 'x',
    });
    expect(result).toEqual({ output: `File created successfully at: ${path}`, isError: false });
  });

  it('never runs a shell with a path', async () => {
    const path = join(ws, 'x; touch pwned');
    await edit({ command: 'create', path, file_text: 'safe' });
    const { output } = await edit({ command: 'view', path: ws });
    expect(output).toContain('x; touch pwned');
    expect(output).not.toContain(join(ws, 'pwned'));
  });

  it('names the missing parameter of a command', async () => {
    expect((await edit({ command: 'create', path: join(ws, 'n.txt') })).output).toBe(
      'Error: Parameter `file_text` is required for command: create',
    );
    expect((await edit({ command: 'rename', path: ws })).output).toMatch(
      /^Error: invalid arguments for str_replace_editor/,
    );
  });
});
