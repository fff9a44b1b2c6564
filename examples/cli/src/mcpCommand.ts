import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import {
  type AgentState,
  createLlmFromConfig,
  createResourcePool,
  describeConfigError,
  type LlmPort,
  llmSettingsFor,
  messageOf,
} from '@openmanus/core';
import { fileTokenStore, loopbackSignIn, MCP_AGENT_NAME, type McpOAuthOptions } from '@openmanus/mcp';
import { terminalLines } from './hostPrompts.js';
import { type ConnectedMcpAgent, type ConnectMcpAgent, connectMcpAgent, type McpServerTarget } from './mcpAgent.js';
import { failure, loadCliConfig, maxStepsOption, sandboxOption } from './options.js';
import { cancelOnSigint, readTask, reportOutcome, runTask, type SessionIo } from './session.js';
import { terminalText } from './terminalText.js';

export const mcpUsage = `Usage: openmanus mcp [options] [task...]

Runs OpenManus's MCP agent (run_mcp.py): a model with the tools of one MCP server, named
mcp_server_<tool>. Without a task, asks for one.

Options:
  -c, --connection <c>  stdio (default): starts an MCP server and uses its tools — this CLI's
                        \`openmanus mcp-server\`, or --server-command;
                        sse or http: a running server at --server-url
  --server-command <c>  for stdio: the server program to start instead (e.g. node, npx)
  --server-arg <arg>    an argument of --server-command; repeat it, one per argument
                        (--server-arg=-y for one that starts with a dash)
  --server-url <url>    the server for sse or http (default http://127.0.0.1:8000/sse for sse,
                        http://127.0.0.1:8000/mcp for http)
  --token <token>       bearer token for the server (default: $OPENMANUS_MCP_TOKEN); without
                        one, a server that asks for OAuth gets a sign-in in your browser, its
                        tokens kept in $XDG_CONFIG_HOME/openmanus/mcp-tokens (~/.config/…)
  --callback-port <n>   the port of the sign-in's http://127.0.0.1:<n>/callback, only that one
                        (default 33418, or a free port when another process has 33418)
  -i, --interactive     one task after another in one conversation; exit, quit or q ends it
  -p, --prompt <task>   the task (the same as giving it as arguments)
  --workspace <dir>     the workspace of the openmanus mcp-server stdio starts (default: ./workspace)
  --sandbox <mode>      isolation of that server's bash: auto (default), bwrap or none
  --config <file>, --model <name>, --max-steps <n>, --json: as for \`openmanus\`
  -h, --help            show this help

Uses the [llm.${MCP_AGENT_NAME}] table of config.toml if there is one, else [llm].
A server that cannot be reached ends the command with exit code 1. The server's questions
(elicitation) and requests for the model (sampling) are asked on the terminal; without one
they are declined, with a note on stderr.`;

/** Words that end an interactive session, as in OpenManus's run_mcp.py. */
const EXIT_WORDS = new Set(['exit', 'quit', 'q']);

const DEFAULT_URLS = { sse: 'http://127.0.0.1:8000/sse', http: 'http://127.0.0.1:8000/mcp' } as const;

const parseArguments = (args: string[]) =>
  parseArgs({
    args,
    allowPositionals: true,
    options: {
      connection: { type: 'string', short: 'c', default: 'stdio' },
      'server-command': { type: 'string' },
      'server-arg': { type: 'string', multiple: true },
      'server-url': { type: 'string' },
      token: { type: 'string' },
      'callback-port': { type: 'string' },
      interactive: { type: 'boolean', short: 'i', default: false },
      prompt: { type: 'string', short: 'p' },
      workspace: { type: 'string' },
      sandbox: { type: 'string' },
      config: { type: 'string' },
      model: { type: 'string' },
      'max-steps': { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });

type Values = ReturnType<typeof parseArguments>['values'];

/** The server the options name, or what is wrong with them. */
function serverTarget(
  values: Values,
  io: SessionIo,
  cliScript: string,
  workspace: string | undefined,
): McpServerTarget | string {
  const { connection } = values;
  const command = values['server-command'];
  const commandArgs = values['server-arg'] ?? [];
  if (connection === 'stdio') {
    if (values['server-url'] !== undefined || values.token !== undefined) {
      return '--server-url and --token are for --connection sse or http';
    }
    if (command !== undefined) {
      if (values.workspace !== undefined || values.sandbox !== undefined) {
        return '--workspace and --sandbox are for openmanus mcp-server, not for --server-command';
      }
      if (command.trim() === '') return '--server-command is empty';
      return { connection, command, args: commandArgs };
    }
    if (commandArgs.length > 0) return '--server-arg goes with --server-command';
    const sandbox = values.sandbox === undefined ? [] : ['--sandbox', values.sandbox];
    return {
      connection,
      command: process.execPath,
      args: [
        cliScript,
        'mcp-server',
        '--transport',
        'stdio',
        ...(workspace ? ['--workspace', resolve(workspace)] : []),
        ...sandbox,
      ],
    };
  }
  if (connection !== 'sse' && connection !== 'http') {
    return `--connection must be "stdio", "sse" or "http", got "${connection}"`;
  }
  if (values.workspace !== undefined || values.sandbox !== undefined) {
    return '--workspace and --sandbox are for --connection stdio (the server it starts)';
  }
  if (command !== undefined || commandArgs.length > 0) {
    return '--server-command and --server-arg are for --connection stdio';
  }
  const url = values['server-url'] ?? DEFAULT_URLS[connection];
  if (!/^https?:\/\//.test(url) || !URL.canParse(url)) return `--server-url must be an http(s) URL, got "${url}"`;
  const token = values.token ?? (io.env.OPENMANUS_MCP_TOKEN || undefined);
  return { connection, url, headers: token ? { Authorization: `Bearer ${token}` } : {} };
}

/**
 * The OAuth sign-in for a server at a URL given no token: the authorization URL is printed, the
 * browser comes back to a one-shot listener on 127.0.0.1, and the tokens are kept for next time.
 */
function oauthFor(
  server: McpServerTarget,
  port: string | undefined,
  io: SessionIo,
): McpOAuthOptions | string | undefined {
  if (server.connection === 'stdio' || 'Authorization' in server.headers) {
    return port === undefined ? undefined : '--callback-port is for a server at a URL, without --token';
  }
  const callbackPort = port === undefined ? undefined : Number(port);
  if (callbackPort !== undefined && !(Number.isInteger(callbackPort) && callbackPort > 0 && callbackPort < 65536)) {
    return `--callback-port must be a port number, got "${port}"`;
  }
  const configDir = io.env.XDG_CONFIG_HOME || join(io.env.HOME || homedir(), '.config');
  return {
    store: fileTokenStore(join(configDir, 'openmanus', 'mcp-tokens')),
    clientMetadata: { client_name: 'OpenManus CLI' },
    ...loopbackSignIn({
      ...(callbackPort ? { port: callbackPort } : {}),
      onAuthorizationUrl: (url) =>
        io.stderr.write(
          `openmanus mcp: ${server.url} asks you to sign in. Open this in your browser:\n  ${url.href}\n`,
        ),
    }),
  };
}

interface Conversation {
  readonly connected: ConnectedMcpAgent;
  readonly llm: LlmPort;
  readonly json: boolean;
  readonly io: SessionIo;
}

/** Tasks typed one after another, each continuing the conversation, until exit, quit, q or the end of input. */
async function converse({ connected, llm, json, io }: Conversation, signal: AbortSignal): Promise<number> {
  const resources = createResourcePool();
  const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: Boolean(io.stdin.isTTY) });
  // Ctrl+C at the prompt ends the session, as exit does.
  rl.on('SIGINT', () => rl.close());
  // One reader of the terminal for the tasks and the runs' questions alike.
  const lines = terminalLines(io, rl);
  let state: AgentState | undefined;
  try {
    for (;;) {
      const line = await lines.ask('\nEnter your request (exit, quit or q to end): ');
      if (line === undefined) break;
      const task = line.trim();
      if (EXIT_WORDS.has(task.toLowerCase())) break;
      if (!task) continue;
      const outcome = await runTask({
        agent: connected.agent,
        llm,
        task,
        json,
        io,
        signal,
        resources,
        command: 'openmanus mcp',
        lines,
        ...(state ? { state } : {}),
      });
      if (signal.aborted) return reportOutcome(outcome, io, json, 'openmanus mcp');
      state = outcome.state;
    }
    return 0;
  } finally {
    lines.close();
    await resources.close();
  }
}

export interface McpCommandOptions {
  /** This CLI's script, run as `node <script> mcp-server` for `--connection stdio`. */
  readonly cliScript: string;
  /** Connects the agent to its server (default: `connectMcpAgent`). */
  readonly connect?: ConnectMcpAgent;
}

/** `openmanus mcp`: the MCP agent on one task, or interactively; returns the exit code. */
export async function mcpCommand(argv: string[], io: SessionIo, options: McpCommandOptions): Promise<number> {
  const fail = failure(io, 'openmanus mcp');
  let parsed: ReturnType<typeof parseArguments>;
  try {
    parsed = parseArguments(argv);
  } catch (error) {
    return fail(`${messageOf(error)}\n\n${mcpUsage}`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout.write(`${mcpUsage}\n`);
    return 0;
  }
  const maxSteps = maxStepsOption(values['max-steps']);
  if (!maxSteps.isOk()) return fail(maxSteps.error);
  const sandbox = sandboxOption(values.sandbox);
  if (!sandbox.isOk()) return fail(sandbox.error);
  if (values.interactive && (values.prompt !== undefined || positionals.length > 0)) {
    return fail('--interactive asks for the tasks: give no task with it');
  }
  const config = loadCliConfig(values, io, 'openmanus mcp');
  if (!config.isOk()) return fail(describeConfigError(config.error));
  const server = serverTarget(values, io, options.cliScript, values.workspace ?? config.value.agent.workspace);
  if (typeof server === 'string') return fail(server);

  let task = '';
  if (!values.interactive) {
    task = values.prompt !== undefined ? values.prompt.trim() : await readTask(positionals, io);
    if (!task) return fail('the task is empty: give one as an argument, or type it at the prompt.');
  }
  // The agent's own `[llm.mcp_agent]` profile: its model, and how much input one request may carry.
  const { max_input_tokens: maxInputTokens } = llmSettingsFor(config.value, MCP_AGENT_NAME);
  const oauth = oauthFor(server, values['callback-port'], io);
  if (typeof oauth === 'string') return fail(oauth);
  const connected = await (options.connect ?? connectMcpAgent)({
    server,
    maxSteps: maxSteps.value ?? config.value.agent.maxSteps ?? 20,
    ...(maxInputTokens ? { maxInputTokens } : {}),
    ...(oauth ? { oauth } : {}),
  });
  if (!connected.isOk()) return fail(connected.error, 1);
  for (const note of connected.value.notes ?? []) io.stderr.write(`openmanus mcp: ${terminalText(note)}\n`);
  const llm = createLlmFromConfig(config.value, MCP_AGENT_NAME);
  const cancel = cancelOnSigint(io, (code) => process.exit(code));
  try {
    if (values.interactive) {
      return await converse({ connected: connected.value, llm, json: values.json, io }, cancel.signal);
    }
    const outcome = await runTask({
      agent: connected.value.agent,
      llm,
      task,
      json: values.json,
      io,
      signal: cancel.signal,
      command: 'openmanus mcp',
    });
    return reportOutcome(outcome, io, values.json, 'openmanus mcp');
  } finally {
    cancel.dispose();
    await connected.value.close();
  }
}
