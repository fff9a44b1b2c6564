// The README's "MCP server" snippets, run as written: inside the package, so that '@openmanus/mcp',
// '@openmanus/core', the SDK and zod resolve as they do for a user.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { connectClient } from './helpers.js';

const packageDir = join(import.meta.dirname, '..');

/** The ```ts blocks of the README section `## heading`. */
async function snippetsUnder(heading: string): Promise<string[]> {
  const text = await readFile(join(packageDir, 'README.md'), 'utf8');
  const start = text.indexOf(`\n## ${heading}\n`);
  if (start === -1) throw new Error(`README.md has no section "## ${heading}"`);
  const end = text.indexOf('\n## ', start + 1);
  return [...text.slice(start, end === -1 ? undefined : end).matchAll(/```ts\n([\s\S]*?)```/g)].map(
    (match) => match[1] ?? '',
  );
}

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A fresh directory in the package holding `code` as `name`. */
async function writeSnippet(name: string, code: string): Promise<string> {
  const dir = await realpath(await mkdtemp(join(packageDir, 'test', '.snippet-')));
  dirs.push(dir);
  await writeFile(join(dir, name), code);
  return dir;
}

describe('the README section "MCP server"', () => {
  it('serves tools over HTTP to the SDK client, as its comments say', async () => {
    const [http = ''] = await snippetsUnder('MCP server');
    const dir = await writeSnippet('snippet.mjs', http);
    const { stdout } = await promisify(execFile)(process.execPath, ['snippet.mjs'], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '' },
    });
    expect(stdout).toBe(
      [
        "[ 'lookup_population', 'str_replace_editor', 'terminate' ]",
        "[ 'Kyoto', 'Osaka', 'Nara' ]",
        "[ { type: 'text', text: 'Nara: 354630' } ]",
        'true Error: invalid arguments for lookup_population:',
        '',
      ].join('\n'),
    );
  });

  it('serve.mjs is a stdio server an MCP host can start', async () => {
    const [, serve = '', ...more] = await snippetsUnder('MCP server');
    expect(more).toEqual([]);
    const dir = await writeSnippet('serve.mjs', serve);
    const client = await connectClient(
      new StdioClientTransport({ command: process.execPath, args: ['serve.mjs'], cwd: dir, env: { PATH: '' } }),
    );
    try {
      expect(client.getInstructions()).toBe(
        `Files are in ${dir}/workspace; str_replace_editor takes absolute paths inside it.`,
      );
      const created = await client.callTool({
        name: 'str_replace_editor',
        arguments: { command: 'create', path: `${dir}/workspace/hello.txt`, file_text: 'hello\n' },
      });
      expect(created.isError).toBeUndefined();
      expect(await readFile(join(dir, 'workspace', 'hello.txt'), 'utf8')).toBe('hello\n');
    } finally {
      await client.close();
    }
  });
});
