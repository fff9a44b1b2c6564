// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings with ${...} in them are bash, not JavaScript.
// `openmanus mcp-server`, run as a process and driven by the official MCP SDK client.
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { defineTool } from '@openmanus/core';
import { processesMatching } from '@openmanus/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { mcpServerCommand } from '../src/mcpServerCommand.js';
import { SERVED_TOOLS } from '../src/servedTools.js';
import type { SessionIo } from '../src/session.js';
import { dist, runNode, tempDir } from './helpers.js';
import { announcement, callTool, connectClient, httpClient, sleeper, startHttpServer, textOf } from './mcpHelpers.js';

const clients: Client[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((client) => client.close()));
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

/** The built CLI over stdio, as an MCP host starts a server (`--sandbox none`: the same on every machine). */
async function stdioServer(workspace: string) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [dist('cli.js'), 'mcp-server', '--workspace', workspace, '--sandbox', 'none'],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root' },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = await connectClient(transport);
  clients.push(client);
  return { client, transport, stderr: () => stderr };
}

async function httpServer(args: string[] = [], env: Record<string, string> = {}) {
  const server = await startHttpServer(args, env);
  children.push(server.child);
  return server;
}

async function connect(url: string, token: string) {
  const connection = await httpClient(url, token);
  clients.push(connection.client);
  return connection;
}

describe('openmanus mcp-server --transport stdio (the default)', () => {
  it('serves bash, browser_use, str_replace_editor and terminate with their full schemas', async () => {
    const workspace = await tempDir();
    const { client, stderr } = await stdioServer(workspace);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['bash', 'browser_use', 'str_replace_editor', 'terminate']);
    expect(tools.map((tool) => tool.name)).toEqual(
      SERVED_TOOLS.map((tool) => tool({ workspace, sandbox: 'none' }).spec.name),
    );
    const schema = (name: string) => tools.find((tool) => tool.name === name)?.inputSchema;
    expect(schema('str_replace_editor')).toMatchObject({
      properties: {
        command: { type: 'string', enum: ['view', 'create', 'str_replace', 'insert', 'undo_edit'] },
        view_range: { type: 'array', items: { type: 'integer' } },
      },
      required: ['command', 'path'],
    });
    expect(schema('terminate')).toMatchObject({ properties: { status: { enum: ['success', 'failure'] } } });
    expect(schema('bash')).toMatchObject({
      properties: { command: { type: 'string' }, restart: { type: 'boolean' }, timeout: { type: 'number' } },
      required: ['command'],
    });
    expect(client.getInstructions()).toContain(`Files are in ${workspace}`);
    expect(stderr()).toBe(
      `openmanus mcp-server: serving bash, browser_use, str_replace_editor, terminate over stdio; workspace ${workspace}\n`,
    );
  });

  it('runs the tools: one shell for the session, the editor in the workspace, errors as isError', async () => {
    const workspace = await tempDir();
    const { client } = await stdioServer(workspace);
    expect(textOf(await callTool(client, 'bash', { command: 'mkdir -p src && cd src && export GREETING=hello' }))).toBe(
      '[exit code 0]',
    );
    expect(textOf(await callTool(client, 'bash', { command: 'echo "$GREETING"; pwd' }))).toBe(
      `hello\n${workspace}/src\n[exit code 0]`,
    );
    const file = join(workspace, 'src', 'app.py');
    await callTool(client, 'str_replace_editor', { command: 'create', path: file, file_text: 'print("hi")\n' });
    await callTool(client, 'str_replace_editor', {
      command: 'str_replace',
      path: file,
      old_str: '"hi"',
      new_str: '"hello"',
    });
    expect(await readFile(file, 'utf8')).toBe('print("hello")\n');
    expect(textOf(await callTool(client, 'bash', { command: 'cat app.py' }))).toBe('print("hello")\n[exit code 0]');

    const failing = await callTool(client, 'bash', { command: 'ls missing' });
    expect(failing.isError).toBeUndefined();
    expect(textOf(failing)).toMatch(
      /\[stderr\]\nls: cannot access 'missing': No such file or directory\n\[exit code 2\]$/,
    );
    const invalid = await callTool(client, 'bash', { command: 'true', timeout: -1 });
    expect(invalid.isError).toBe(true);
    expect(textOf(invalid)).toMatch(/^Error: invalid arguments for bash:\n✖ .*\n {2}→ at timeout$/);
    const outside = await callTool(client, 'str_replace_editor', { command: 'view', path: '/etc/passwd' });
    expect(outside).toEqual({
      content: [
        {
          type: 'text',
          text: `Error: The path /etc/passwd is outside the workspace ${workspace}; only files inside it can be used.`,
        },
      ],
      isError: true,
    });
    expect(textOf(await callTool(client, 'terminate', { status: 'success' }))).toMatch(/success/);
  });

  it('ends when the client disconnects, leaving no process behind', async () => {
    const { client, transport } = await stdioServer(await tempDir());
    const background = sleeper();
    await callTool(client, 'bash', { command: `${background} > /dev/null 2>&1 &` });
    await expect.poll(() => processesMatching(background)).toHaveLength(1);
    const pid = transport.pid;
    await client.close();
    // The SDK gives the server 2 s to exit on its own before SIGTERM, which would leave the sleeper.
    expect(processesMatching(background)).toEqual([]);
    expect(processesMatching(dist('cli.js')).filter((found) => found === pid)).toEqual([]);
  });
});

describe('openmanus mcp-server --transport http', () => {
  it('prints its URL and a fresh token, and refuses requests without the token', async () => {
    const workspace = await tempDir();
    const server = await httpServer(['--workspace', workspace, '--sandbox', 'none']);
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(server.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(server.stderr()).toBe(
      [
        'openmanus mcp-server: serving bash, browser_use, str_replace_editor, terminate over streamable HTTP',
        `  url:       ${server.url}`,
        `  token:     ${server.token}   (clients send "Authorization: Bearer <token>")`,
        `  workspace: ${workspace}`,
        'Ctrl+C stops it.',
        '',
      ].join('\n'),
    );
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} };
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    for (const authorization of [undefined, 'Bearer not-the-token']) {
      const answer = await fetch(server.url, {
        method: 'POST',
        headers: authorization ? { ...headers, authorization } : headers,
        body: JSON.stringify(initialize),
      });
      expect(answer.status).toBe(401);
    }
    const foreign = await fetch(server.url, {
      method: 'POST',
      headers: { ...headers, authorization: `Bearer ${server.token}`, origin: 'https://attacker.example' },
      body: JSON.stringify(initialize),
    });
    expect(foreign.status).toBe(403);
    expect(server.stderr()).toContain('openmanus mcp-server: Invalid Origin header: https://attacker.example\n');
  });

  it('gives each session its own shell; a closed session’s processes end, and SIGTERM ends the rest', async () => {
    const workspace = await tempDir();
    // The default sandbox: bubblewrap where it works, as a user gets it.
    const server = await httpServer(['--workspace', workspace]);
    const token = server.token ?? '';
    const first = await connect(server.url, token);
    const second = await connect(server.url, token);
    await callTool(first.client, 'bash', { command: 'export OWNER=first; cd /tmp' });
    expect(textOf(await callTool(second.client, 'bash', { command: 'echo "${OWNER:-nobody}"; pwd' }))).toBe(
      `nobody\n${workspace}\n[exit code 0]`,
    );
    expect(textOf(await callTool(first.client, 'bash', { command: 'echo "$OWNER"; pwd' }))).toBe(
      'first\n/tmp\n[exit code 0]',
    );
    const [firstSleeper, secondSleeper] = [sleeper(), sleeper()];
    await callTool(first.client, 'bash', { command: `${firstSleeper} > /dev/null 2>&1 &` });
    await callTool(second.client, 'bash', { command: `${secondSleeper} > /dev/null 2>&1 &` });
    // Started in the background: they exist a moment after the call returns, not necessarily at once.
    await expect.poll(() => processesMatching(firstSleeper)).toHaveLength(1);
    await expect.poll(() => processesMatching(secondSleeper)).toHaveLength(1);
    await first.transport.terminateSession();
    await expect.poll(() => processesMatching(firstSleeper)).toEqual([]);
    expect(processesMatching(secondSleeper)).toHaveLength(1);

    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(processesMatching(secondSleeper)).toEqual([]);
  });

  it('takes the token from --token or OPENMANUS_MCP_TOKEN, and does not print it', async () => {
    const secret = 'a-token-of-my-own-choosing';
    for (const [args, env] of [[['--token', secret], {}] as const, [[], { OPENMANUS_MCP_TOKEN: secret }] as const]) {
      const server = await httpServer([...args], env);
      expect(server.token).toBeUndefined();
      expect(server.stderr()).not.toContain(secret);
      expect(server.stderr()).toContain('  token:     the one given');
      const { client } = await connect(server.url, secret);
      expect((await client.listTools()).tools).toHaveLength(4);
      server.child.kill('SIGINT');
      expect(await server.exited).toBe(0);
    }
  });

  it('says what is wrong with bad options, and with a port in use', async () => {
    const cases: [string[], string][] = [
      [['--transport', 'sse'], '--transport must be "stdio" or "http", got "sse"'],
      [['--transport', 'http', '--port', '70000'], '--port must be a port number (0 to 65535), got "70000"'],
      [['--transport', 'http', '--port', 'eighty'], '--port must be a port number (0 to 65535), got "eighty"'],
      [['--port', '8000'], '--port and --token are for --transport http'],
      [['--transport', 'http', '--token', ' '], '--token is empty'],
      [['--sandbox', 'docker'], '--sandbox must be "auto", "bwrap" or "none", got "docker"'],
    ];
    for (const [args, message] of cases) {
      const ran = await runNode('cli.js', ['mcp-server', ...args]);
      expect(ran.code, args.join(' ')).toBe(2);
      expect(ran.stderr).toBe(`openmanus mcp-server: ${message}\n`);
    }
    const server = await httpServer();
    const { port } = new URL(server.url);
    const busy = await runNode('cli.js', ['mcp-server', '--transport', 'http', '--port', port]);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toMatch(
      new RegExp(
        `^openmanus mcp-server: cannot serve on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE.*: choose another --port\\n$`,
      ),
    );
    const help = await runNode('cli.js', ['mcp-server', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: openmanus mcp-server [--transport stdio|http]');
  });
});

describe('the tools mcp-server serves', () => {
  it('are SERVED_TOOLS: a tool added there is served with the rest', async () => {
    const picture = defineTool({
      name: 'picture',
      description: 'A picture of the workspace.',
      parameters: { type: 'object', properties: {} },
      execute: () => ({ output: 'A picture.', image: { base64: 'iVBORw0KGgo=', mimeType: 'image/png' } }),
    });
    const stderr = new PassThrough();
    const io: SessionIo = { stdin: new PassThrough(), stdout: new PassThrough(), stderr, env: {} };
    const workspace = await tempDir();
    const ready = announcement(stderr);
    const stopped = mcpServerCommand(
      ['--transport', 'http', '--port', '0', '--workspace', workspace, '--sandbox', 'none'],
      io,
      [...SERVED_TOOLS, () => picture],
    );
    const { url, token } = await ready;
    const { client } = await connect(url, token ?? '');
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual([
      'bash',
      'browser_use',
      'str_replace_editor',
      'terminate',
      'picture',
    ]);
    expect((await callTool(client, 'picture')).content).toEqual([
      { type: 'text', text: 'A picture.' },
      { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
    ]);
    expect(existsSync(workspace)).toBe(true);
    process.emit('SIGINT');
    expect(await stopped).toBe(0);
  });
});
