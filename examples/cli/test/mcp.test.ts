// `openmanus mcp`: its options, its interactive loop and what it connects to. The MCP client agent
// itself (createMcpAgent of @openmanus/mcp) is not in this build: the loop is driven here through
// the `connect` seam with a plain agent that has the server's tools, and a scripted model.
import { PassThrough } from 'node:stream';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createAgent, ok, terminate } from '@openmanus/core';
import { type OpenAiServer, type RecordedRequest, type ScriptEntry, startOpenAiServer } from '@openmanus/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import type { ConnectMcpAgent, McpAgentSettings } from '../src/mcpAgent.js';
import { mcpCommand } from '../src/mcpCommand.js';
import type { SessionIo } from '../src/session.js';
import { dist, runNode, tempDir } from './helpers.js';
import { connectClient } from './mcpHelpers.js';

const servers: OpenAiServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function endpoint(script: ScriptEntry<RecordedRequest>[]) {
  const server = await startOpenAiServer({ script });
  servers.push(server);
  return { server, env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseURL } };
}

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
    const agent = createAgent({ name: 'mcp', tools: [terminate], maxSteps: settings.maxSteps });
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

describe('openmanus mcp, as built', () => {
  it('says that the MCP client agent is not in this build yet, and exits non-zero', async () => {
    const ran = await runNode('cli.js', ['mcp', '-p', 'List the files'], { env: { OPENAI_API_KEY: 'sk-test' } });
    expect(ran.code).toBe(1);
    expect(ran.stderr).toBe(
      'openmanus mcp: the MCP client agent is not part of this build yet (createMcpAgent of @openmanus/mcp); `openmanus mcp-server` works, and any MCP client can use it.\n',
    );
  });

  it('--help shows its options', async () => {
    const help = await runNode('cli.js', ['mcp', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('-c, --connection <c>  stdio (default)');
    expect(help.stdout).toContain(
      '-i, --interactive     one task after another in one conversation; exit, quit or q ends it',
    );
  });
});
