// The README's "MCP server" snippets, run as written: inside the package, so that '@openmanus/mcp',
// '@openmanus/core', the SDK and zod resolve as they do for a user.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { readmeOf, snippetDirs, snippetRunner } from '../../core/test/readmeCheck.js';
import { connectClient, packageDir } from './helpers.js';

const { blocks } = await readmeOf(packageDir);
const runSnippet = snippetRunner(packageDir);
const snippetDir = snippetDirs(packageDir);

describe('the README section "MCP server"', () => {
  it('serves tools over HTTP to the SDK client, as its comments say', async () => {
    const [http = ''] = blocks('## MCP server', 'ts');
    const { stdout } = await runSnippet(http, { typescript: true });
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
    const [, serve = '', ...more] = blocks('## MCP server', 'ts');
    expect(more).toEqual([]);
    const dir = await snippetDir({ 'serve.mjs': serve });
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
