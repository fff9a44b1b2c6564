// `openmanus mcp`: its options and its interactive loop, driven in this process through the
// `connect` seam with a plain agent; then the built CLI end to end, with createMcpAgent connected
// to real MCP servers (ours, over stdio and HTTP, and the reference "everything" server).
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createAgent, defaultPolicies, ok, terminate } from '@openmanus/core';
import { processesMatching, type RecordedRequest } from '@openmanus/core/testing';
import { describe, expect, it } from 'vitest';
import type { ConnectMcpAgent, McpAgentSettings } from '../src/mcpAgent.js';
import { mcpCommand } from '../src/mcpCommand.js';
import type { SessionIo } from '../src/session.js';
import { dist, runNode, scriptedModels, tempDir } from './helpers.js';
import { connectClient, startHttpServer } from './mcpHelpers.js';

const endpoint = scriptedModels();

/** The command in this process: `input` is what the person types; stdout and stderr are collected. */
function session(env: Record<string, string>, input = '') {
  const collect = (stream: PassThrough) => {
    let text = '';
    stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
    return () => text;
  };
  const [stdin, stdout, stderr] = [new PassThrough(), new PassThrough(), new PassThrough()];
  stdin.end(input);
  const io: SessionIo = { stdin, stdout, stderr, env };
  return { io, stdout: collect(stdout), stderr: collect(stderr) };
}

/** A connector that records what it was asked to connect to and gives an agent with terminate. */
function recordingConnector() {
  const asked: McpAgentSettings[] = [];
  let closed = 0;
  const connect: ConnectMcpAgent = async (settings) => {
    asked.push(settings);
    const agent = createAgent({
      name: 'mcp',
      tools: [terminate],
      policies: defaultPolicies({ maxSteps: settings.maxSteps }),
    });
    return ok({ agent, close: async () => void closed++ });
  };
  return { connect, asked, closed: () => closed };
}

const options = (connect: ConnectMcpAgent) => ({ cliScript: dist('cli.js'), connect });

describe('openmanus mcp', () => {
  it('runs one task with the agent, then disconnects', async () => {
    const { server, env } = await endpoint([{ content: 'Three files.' }]);
    const connector = recordingConnector();
    const { io, stdout } = session(env);
    expect(await mcpCommand(['-p', 'Count the files', '--max-steps', '7'], io, options(connector.connect))).toBe(0);
    expect(stdout()).toBe('Three files.\n');
    expect(server.requests[0]?.messages.at(-1)).toEqual({ role: 'user', content: 'Count the files' });
    expect(connector.asked[0]?.maxSteps).toBe(7);
    expect(connector.closed()).toBe(1);
  });

  it('--interactive: one conversation, task after task, until exit, quit or q', async () => {
    for (const word of ['exit', 'quit', 'q', 'QUIT']) {
      const { server, env } = await endpoint([{ content: 'First done.' }, { content: 'Second done.' }]);
      const connector = recordingConnector();
      const { io, stdout, stderr } = session(env, `first task\n\nsecond task\n${word}\nnever run\n`);
      expect(await mcpCommand(['--interactive'], io, options(connector.connect))).toBe(0);
      expect(stdout()).toBe('First done.\nSecond done.\n');
      expect(server.requests).toHaveLength(2);
      // The second task continues the conversation of the first.
      expect(server.requests[1]?.messages.filter((message) => message.role !== 'system')).toEqual([
        { role: 'user', content: 'first task' },
        { role: 'assistant', content: 'First done.' },
        { role: 'user', content: 'second task' },
      ]);
      expect(stderr()).toContain('Enter your request (exit, quit or q to end): ');
      expect(connector.closed()).toBe(1);
    }
  });

  it('--interactive ends at the end of input too', async () => {
    const { server, env } = await endpoint([{ content: 'Done.' }]);
    const connector = recordingConnector();
    const { io } = session(env, 'only task\n');
    expect(await mcpCommand(['-i'], io, options(connector.connect))).toBe(0);
    expect(server.requests).toHaveLength(1);
    expect(connector.closed()).toBe(1);
  });

  it('--connection stdio (the default) starts this CLI’s own MCP server', async () => {
    const { env } = await endpoint([{ content: 'ok' }]);
    const connector = recordingConnector();
    const workspace = await tempDir();
    const { io } = session(env);
    const args = ['--workspace', workspace, '--sandbox', 'none', 'task'];
    expect(await mcpCommand(args, io, options(connector.connect))).toBe(0);
    const target = connector.asked[0]?.server;
    expect(target).toEqual({
      connection: 'stdio',
      command: process.execPath,
      args: [dist('cli.js'), 'mcp-server', '--transport', 'stdio', '--workspace', workspace, '--sandbox', 'none'],
    });
    if (target?.connection !== 'stdio') throw new Error('not stdio');
    // What it names really is a server with OpenManus's tools.
    const client = await connectClient(
      new StdioClientTransport({
        command: target.command,
        args: [...target.args],
        env: { PATH: process.env.PATH ?? '' },
      }),
    );
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual([
        'bash',
        'browser_use',
        'str_replace_editor',
        'terminate',
      ]);
    } finally {
      await client.close();
    }
  });

  it('--server-command and --server-arg: another server for stdio, its arguments in order', async () => {
    const { env } = await endpoint([{ content: 'ok' }]);
    const connector = recordingConnector();
    // An argument that starts with a dash is given with `=`, as node's parseArgs wants.
    const args = ['--server-command', 'npx', '--server-arg=-y', '--server-arg', 'some server', 'task'];
    expect(await mcpCommand(args, session(env).io, options(connector.connect))).toBe(0);
    expect(connector.asked[0]?.server).toEqual({ connection: 'stdio', command: 'npx', args: ['-y', 'some server'] });
  });

  it('--connection sse|http: the server URL (OpenManus’s default for sse) and the bearer token', async () => {
    const { env } = await endpoint([{ content: 'a' }, { content: 'b' }, { content: 'c' }]);
    const connector = recordingConnector();
    await mcpCommand(['-c', 'sse', 'task'], session(env).io, options(connector.connect));
    await mcpCommand(
      ['--connection', 'http', '--server-url', 'http://127.0.0.1:9000/mcp', '--token', 't0k', 'task'],
      session(env).io,
      options(connector.connect),
    );
    await mcpCommand(
      ['-c', 'http', 'task'],
      session({ ...env, OPENMANUS_MCP_TOKEN: 'from-env' }).io,
      options(connector.connect),
    );
    expect(connector.asked.map((settings) => settings.server)).toEqual([
      { connection: 'sse', url: 'http://127.0.0.1:8000/sse', headers: {} },
      { connection: 'http', url: 'http://127.0.0.1:9000/mcp', headers: { Authorization: 'Bearer t0k' } },
      { connection: 'http', url: 'http://127.0.0.1:8000/mcp', headers: { Authorization: 'Bearer from-env' } },
    ]);
  });

  it('says what is wrong with bad options, before connecting to anything', async () => {
    const connector = recordingConnector();
    const cases: [string[], string][] = [
      [['-c', 'ws', 'x'], '--connection must be "stdio", "sse" or "http", got "ws"'],
      [
        ['-c', 'http', '--server-url', 'ftp://host/mcp', 'x'],
        '--server-url must be an http(s) URL, got "ftp://host/mcp"',
      ],
      [['--server-url', 'http://127.0.0.1:8000/sse', 'x'], '--server-url and --token are for --connection sse or http'],
      [
        ['-c', 'sse', '--workspace', '/tmp', 'x'],
        '--workspace and --sandbox are for --connection stdio (the server it starts)',
      ],
      [['--server-arg', 'a', 'x'], '--server-arg goes with --server-command'],
      [
        ['--server-command', 'node', '--workspace', '/tmp', 'x'],
        '--workspace and --sandbox are for openmanus mcp-server, not for --server-command',
      ],
      [['-c', 'http', '--server-command', 'node', 'x'], '--server-command and --server-arg are for --connection stdio'],
      [['--server-command', ' ', 'x'], '--server-command is empty'],
      [['-i', '-p', 'x'], '--interactive asks for the tasks: give no task with it'],
      [['--max-steps', '0', 'x'], '--max-steps must be a positive whole number, got "0"'],
      [['--sandbox', 'docker', 'x'], '--sandbox must be "auto", "bwrap" or "none", got "docker"'],
      [['-p', '  '], 'the task is empty: give one as an argument, or type it at the prompt.'],
    ];
    for (const [args, message] of cases) {
      const { io, stderr } = session({ OPENAI_API_KEY: 'k' });
      expect(await mcpCommand(args, io, options(connector.connect)), args.join(' ')).toBe(2);
      expect(stderr()).toBe(`openmanus mcp: ${message}\n`);
    }
    const { io, stderr } = session({});
    expect(await mcpCommand(['x'], io, options(connector.connect))).toBe(2);
    expect(stderr()).toMatch(/^openmanus mcp: no LLM is configured/);
    expect(connector.asked).toEqual([]);
  });
});

describe('openmanus mcp, end to end: the built CLI, a real MCP server and a scripted model over HTTP', () => {
  const everything = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');
  const everythingArgs = ['--server-command', process.execPath, '--server-arg', everything];
  const toolMessage = (request: RecordedRequest | undefined) =>
    request?.messages.find((message) => message.role === 'tool')?.content;
  /** A result of the server ("server" to openmanus mcp), as the model reads it: in its block marked untrusted. */
  const fromServer = (text: string) => `<mcp_content server="server" untrusted="true">\n${text}\n</mcp_content>`;
  const toolNames = (request: RecordedRequest | undefined) =>
    (request?.tools ?? []).map((tool) => (tool as { function: { name: string } }).function.name);

  it('--connection stdio (the default): our own mcp-server’s bash, then terminate; the [llm.mcp_agent] profile', async () => {
    const { server, env } = await endpoint([
      {
        toolCalls: [{ name: 'mcp_server_bash', arguments: { command: 'echo made-by-mcp > note.txt && cat note.txt' } }],
      },
      { content: 'Wrote note.txt.', toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
    ]);
    const workspace = await tempDir();
    const config = join(workspace, 'config.toml');
    await writeFile(config, '[llm]\nmodel = "general"\n\n[llm.mcp_agent]\nmodel = "for-mcp"\n');
    const ran = await runNode(
      'cli.js',
      ['mcp', '--config', config, '--workspace', workspace, '--sandbox', 'none', '--prompt', 'Write a note'],
      { env },
    );
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toBe('Wrote note.txt.\n');
    expect(await readFile(join(workspace, 'note.txt'), 'utf8')).toBe('made-by-mcp\n');
    expect(toolMessage(server.requests[1])).toMatch(
      /^<mcp_content server="server" untrusted="true">\n.*made-by-mcp.*\n<\/mcp_content>$/s,
    );
    expect(toolNames(server.requests[0])).toEqual([
      'terminate',
      'mcp_server_bash',
      'mcp_server_browser_use',
      'mcp_server_str_replace_editor',
      'mcp_server_terminate',
      // Our mcp-server serves the workspace's files and two prompts: the client's catalogue tools.
      'mcp_server_list_resources',
      'mcp_server_read_resource',
      'mcp_server_list_prompts',
      'mcp_server_get_prompt',
    ]);
    expect(server.requests.map((request) => request.model)).toEqual(['for-mcp', 'for-mcp']);
    // The server it started is gone with it.
    expect(processesMatching(`mcp-server --transport stdio --workspace ${workspace}`)).toEqual([]);
  });

  it('--server-command: drives the reference "everything" server (its echo tool) over stdio', async () => {
    const { server, env } = await endpoint([
      { toolCalls: [{ name: 'mcp_server_echo', arguments: { message: 'hello from openmanus' } }] },
      { content: 'It echoed.', toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
    ]);
    const ran = await runNode('cli.js', ['mcp', ...everythingArgs, 'Echo a greeting'], { env });
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toBe('It echoed.\n');
    expect(toolNames(server.requests[0])).toEqual(expect.arrayContaining(['mcp_server_echo', 'mcp_server_get-sum']));
    expect(toolMessage(server.requests[1])).toBe(fromServer('Echo: hello from openmanus'));
  });

  it('--interactive: a task, then exit', async () => {
    const { server, env } = await endpoint([
      { toolCalls: [{ name: 'mcp_server_get-sum', arguments: { a: 2, b: 3 } }] },
      { content: 'Five.', toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
    ]);
    const ran = await runNode('cli.js', ['mcp', ...everythingArgs, '--interactive'], {
      env,
      input: 'What is 2 + 3?\nexit\nnever asked\n',
    });
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toBe('Five.\n');
    expect(server.requests).toHaveLength(2);
    expect(toolMessage(server.requests[1])).toBe(fromServer('The sum of 2 and 3 is 5.'));
    expect(ran.stderr).toContain('Enter your request (exit, quit or q to end): ');
  });

  it('--connection http: drives our own `mcp-server --transport http` with its token', async () => {
    const { server, env } = await endpoint([
      { toolCalls: [{ name: 'mcp_server_bash', arguments: { command: 'pwd' } }] },
      { content: 'Listed.', toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
    ]);
    const workspace = await tempDir();
    const served = await startHttpServer(['--workspace', workspace, '--sandbox', 'none']);
    try {
      if (!served.token) throw new Error(`no token in: ${served.stderr()}`);
      const ran = await runNode(
        'cli.js',
        ['mcp', '--connection', 'http', '--server-url', served.url, `--token=${served.token}`, '-p', 'Where are you?'],
        { env },
      );
      expect(ran.code, ran.stderr).toBe(0);
      expect(ran.stdout).toBe('Listed.\n');
      expect(toolMessage(server.requests[1])).toContain(workspace);
      // Without the token, the server refuses, and the OAuth sign-in tried then fails (it has no
      // OAuth): a clear error before any model request.
      const refused = await runNode('cli.js', ['mcp', '-c', 'http', '--server-url', served.url, 'x'], { env });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(
        new RegExp(`^openmanus mcp: cannot connect to the MCP server \\(${served.url}\\): the OAuth sign-in failed: `),
      );
      expect(server.requests).toHaveLength(2);
    } finally {
      served.child.kill('SIGTERM');
      await served.exited;
    }
  });

  it('a server that cannot be reached is a clear error, exit code 1, and no model request', async () => {
    const { server, env } = await endpoint([{ content: 'never' }]);
    const port = await closedPort();
    const url = `http://127.0.0.1:${port}/mcp`;
    const remote = await runNode('cli.js', ['mcp', '-c', 'http', '--server-url', url, '-p', 'x'], { env });
    expect(remote.code).toBe(1);
    expect(remote.stderr).toMatch(
      new RegExp(`^openmanus mcp: cannot connect to the MCP server \\(${url}\\): .*ECONNREFUSED`),
    );
    const missing = join(await tempDir(), 'no-such-server');
    const local = await runNode('cli.js', ['mcp', '--server-command', missing, '-p', 'x'], { env });
    expect(local.code).toBe(1);
    expect(local.stderr).toBe(
      `openmanus mcp: cannot connect to the MCP server (${missing}): could not start "${missing}" (no such program)\n`,
    );
    expect(server.requests).toEqual([]);
  });

  it('the README’s command for the everything server works as written, from the repository root', async () => {
    const root = join(dist('..'), '..', '..');
    const readme = await readFile(join(root, 'examples', 'cli', 'README.md'), 'utf8');
    const block = readme.slice(
      readme.indexOf('<!-- mcp-commands:start -->'),
      readme.indexOf('<!-- mcp-commands:end -->'),
    );
    const command = block.split('\n').find((line) => line.includes('server-everything'));
    if (!command?.startsWith('pnpm openmanus mcp ')) throw new Error(`no everything command in: ${block}`);
    // The site's CLI page shows the same command.
    expect(await readFile(join(root, 'docs', 'src', 'content', 'docs', 'cli', 'index.md'), 'utf8')).toContain(command);
    const { server, env } = await endpoint([
      { toolCalls: [{ name: 'mcp_server_get-sum', arguments: { a: 2, b: 3 } }] },
      { content: '2 + 3 = 5.', toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
    ]);
    // `pnpm openmanus` is a build, then this script.
    const script = command.replace('pnpm openmanus', `"${process.execPath}" "${dist('cli.js')}"`);
    const { stdout } = await promisify(execFile)('sh', ['-c', script], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...env },
    });
    expect(stdout).toBe('2 + 3 = 5.\n');
    expect(server.requests[0]?.messages).toContainEqual({
      role: 'user',
      content: "Add 2 and 3 with the server's tool",
    });
    expect(toolMessage(server.requests[1])).toBe(fromServer('The sum of 2 and 3 is 5.'));
  });

  it('--help shows its options', async () => {
    const help = await runNode('cli.js', ['mcp', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('-c, --connection <c>  stdio (default)');
    expect(help.stdout).toContain('--server-command <c>  for stdio: the server program to start instead');
    expect(help.stdout).toContain('--server-arg <arg>    an argument of --server-command; repeat it');
    expect(help.stdout).toContain(
      '-i, --interactive     one task after another in one conversation; exit, quit or q ends it',
    );
    expect(help.stdout).toContain('Uses the [llm.mcp_agent] table of config.toml');
  });
});

/** A port on 127.0.0.1 that nothing listens on (it was free a moment ago). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
