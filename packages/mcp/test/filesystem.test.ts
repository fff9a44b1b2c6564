// Our client against the reference filesystem server from npm, confined to a temporary directory.
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { processesMatching } from '@openmanus/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpClient, type McpClient } from '../src/client/mcpClient.js';
import { block, filesystemScript, fromServer, observe, tempWorkspace, toolNamed } from './helpers.js';

describe('the filesystem server over stdio, in a temporary directory', () => {
  let dir: string;
  let client: McpClient;
  beforeAll(async () => {
    dir = await tempWorkspace(); // on the server's command line: its processes are found by it
    await writeFile(join(dir, 'notes.txt'), 'first line\nsecond line\n');
    client = createMcpClient({ servers: { fs: { command: process.execPath, args: [filesystemScript, dir] } } });
    await client.connect();
  });
  afterAll(async () => {
    await client.close();
    expect(processesMatching(dir)).toEqual([]);
    await rm(dir, { recursive: true, force: true });
  });

  it('lists, reads and writes files in its directory', async () => {
    expect((await observe(toolNamed(client, 'mcp_fs_list_directory'), { path: dir })).output).toBe(
      block('fs', '[FILE] notes.txt'),
    );
    expect(
      (await observe(toolNamed(client, 'mcp_fs_read_text_file'), { path: join(dir, 'notes.txt'), head: 1 })).output,
    ).toBe(block('fs', 'first line'));
    const written = await observe(toolNamed(client, 'mcp_fs_write_file'), {
      path: join(dir, 'out.md'),
      content: '# done\n',
    });
    expect(written.isError).toBeUndefined();
    expect(await readFile(join(dir, 'out.md'), 'utf8')).toBe('# done\n');
  });

  it('reports its refusal of a path outside the directory as an error observation', async () => {
    const seen = await observe(toolNamed(client, 'mcp_fs_read_text_file'), { path: '/etc/hostname' });
    expect(seen.isError).toBe(true);
    expect(fromServer('fs', seen.output.replace(/^Error: /, ''))).toMatch(
      /Access denied - path outside allowed directories/,
    );
  });
});
