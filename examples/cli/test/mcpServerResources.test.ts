// `openmanus mcp-server`'s resources (the workspace's files) and prompts, read by the official MCP
// SDK client from the built CLI over stdio.
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_FILE_BYTES } from '../src/servedResources.js';
import { dist, tempDir } from './helpers.js';
import { connectClient } from './mcpHelpers.js';

let outside: string;
let workspace: string;
let client: Client;

beforeEach(async () => {
  outside = await tempDir();
  workspace = join(outside, 'workspace');
  await mkdir(join(workspace, 'src', 'deep'), { recursive: true });
  await writeFile(join(workspace, 'README.md'), '# Notes\n');
  await writeFile(join(workspace, 'src', 'add.ts'), 'export const add = (a: number, b: number) => a - b;\n');
  await writeFile(join(workspace, 'src', 'deep', 'with space.txt'), 'spaced\n');
  await writeFile(join(workspace, 'logo.bin'), Buffer.from([0x89, 0x50, 0x00, 0xff]));
  await writeFile(join(workspace, 'big.txt'), 'x'.repeat(MAX_FILE_BYTES + 1));
  await writeFile(join(workspace, '.env'), 'SECRET=1\n');
  await writeFile(join(outside, 'secret.txt'), 'not for clients\n');
  await symlink(join(outside, 'secret.txt'), join(workspace, 'link.txt'));
  await symlink(outside, join(workspace, 'up'));

  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [dist('cli.js'), 'mcp-server', '--workspace', workspace, '--sandbox', 'none'],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root' },
    stderr: 'pipe',
  });
  client = await connectClient(transport);
});
afterEach(async () => {
  await client.close();
  await rm(outside, { recursive: true, force: true });
});

const uri = (path: string) => `${pathToFileURL(workspace).href}/${path}`;

async function refusal(request: Promise<unknown>): Promise<string> {
  const error = await request.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(McpError);
  return (error as McpError).message;
}

describe('openmanus mcp-server: the workspace as resources', () => {
  it('lists the workspace’s files (not hidden ones, not symlinks) under a file:// template', async () => {
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates).toMatchObject([
      { uriTemplate: `${pathToFileURL(workspace).href}/{+path}`, name: 'workspace-file' },
    ]);
    const { resources } = await client.listResources();
    expect(resources.map((resource) => resource.name)).toEqual([
      'README.md',
      'big.txt',
      'logo.bin',
      'src/add.ts',
      'src/deep/with space.txt',
    ]);
    expect(resources.find((resource) => resource.name === 'README.md')).toEqual({
      uri: uri('README.md'),
      name: 'README.md',
      mimeType: 'text/markdown',
    });
    expect(resources.at(-1)?.uri).toBe(uri('src/deep/with%20space.txt'));
  });

  it('reads text files as text and others as base64', async () => {
    expect((await client.readResource({ uri: uri('src/add.ts') })).contents).toEqual([
      {
        uri: uri('src/add.ts'),
        mimeType: 'text/x-typescript',
        text: 'export const add = (a: number, b: number) => a - b;\n',
      },
    ]);
    expect((await client.readResource({ uri: uri('src/deep/with%20space.txt') })).contents[0]).toMatchObject({
      text: 'spaced\n',
    });
    expect((await client.readResource({ uri: uri('logo.bin') })).contents).toEqual([
      {
        uri: uri('logo.bin'),
        mimeType: 'application/octet-stream',
        blob: Buffer.from([0x89, 0x50, 0x00, 0xff]).toString('base64'),
      },
    ]);
  });

  it('reads nothing outside the workspace: no .., no symlink out, no other file:// path; nor a file over the limit', async () => {
    expect(await refusal(client.readResource({ uri: uri('../secret.txt') }))).toContain('outside the workspace');
    expect(await refusal(client.readResource({ uri: uri('src/%2e%2e/%2e%2e/secret.txt') }))).toContain(
      'outside the workspace',
    );
    expect(await refusal(client.readResource({ uri: uri('link.txt') }))).toMatch(/outside the workspace|symbolic link/);
    expect(await refusal(client.readResource({ uri: uri('up/secret.txt') }))).toContain('outside the workspace');
    expect(await refusal(client.readResource({ uri: `${pathToFileURL(outside).href}/secret.txt` }))).toContain(
      'not found',
    );
    expect(await refusal(client.readResource({ uri: uri('/etc/passwd') }))).toContain('outside the workspace');
    expect(await refusal(client.readResource({ uri: uri('big.txt') }))).toContain(
      `big.txt is ${MAX_FILE_BYTES + 1} bytes; files of at most ${MAX_FILE_BYTES} bytes are served`,
    );
    expect(await refusal(client.readResource({ uri: uri('src') }))).toContain('src is not a file');
    expect(await refusal(client.readResource({ uri: uri('missing.md') }))).toContain('missing.md does not exist');
    // The session goes on.
    expect((await client.readResource({ uri: uri('README.md') })).contents[0]).toMatchObject({ text: '# Notes\n' });
  });

  it('completes paths, and offers review_file (the file embedded) and plan_task', async () => {
    const completed = await client.complete({
      ref: { type: 'ref/resource', uri: `${pathToFileURL(workspace).href}/{+path}` },
      argument: { name: 'path', value: 'src/' },
    });
    expect(completed.completion.values).toEqual(['src/add.ts', 'src/deep/with space.txt']);

    const { prompts } = await client.listPrompts();
    expect(prompts.map((prompt) => [prompt.name, prompt.arguments?.map((arg) => [arg.name, arg.required])])).toEqual([
      ['review_file', [['path', true]]],
      ['plan_task', [['task', true]]],
    ]);
    const review = await client.getPrompt({ name: 'review_file', arguments: { path: 'src/add.ts' } });
    expect(review.messages[0]).toEqual({
      role: 'user',
      content: {
        type: 'resource',
        resource: {
          uri: uri('src/add.ts'),
          mimeType: 'text/x-typescript',
          text: 'export const add = (a: number, b: number) => a - b;\n',
        },
      },
    });
    expect(review.messages[1]?.content).toMatchObject({
      type: 'text',
      text: expect.stringContaining('Please review src/add.ts'),
    });
    expect(await refusal(client.getPrompt({ name: 'review_file', arguments: { path: '../secret.txt' } }))).toContain(
      'outside the workspace',
    );
    expect(await refusal(client.getPrompt({ name: 'review_file', arguments: { path: 'logo.bin' } }))).toContain(
      'logo.bin is not a text file',
    );
    expect(
      (
        await client.complete({
          ref: { type: 'ref/prompt', name: 'review_file' },
          argument: { name: 'path', value: 'R' },
        })
      ).completion.values,
    ).toEqual(['README.md']);

    const plan = await client.getPrompt({ name: 'plan_task', arguments: { task: 'Fix add so that it adds.' } });
    expect(plan.messages).toHaveLength(1);
    expect(plan.messages[0]?.content).toMatchObject({
      type: 'text',
      text: expect.stringContaining('Fix add so that it adds.'),
    });
    expect(plan.messages[0]?.content).toMatchObject({ text: expect.stringContaining(`The workspace is ${workspace}`) });
  });
});
