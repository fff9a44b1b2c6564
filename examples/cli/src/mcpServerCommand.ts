import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { messageOf } from '@openmanus/core';
import { createMcpServer } from '@openmanus/mcp';
import { failure, sandboxOption } from './options.js';
import { workspaceCatalog } from './servedResources.js';
import { SERVED_TOOLS, type ServedTool } from './servedTools.js';
import type { SessionIo } from './session.js';
import { terminalText } from './terminalText.js';

export const mcpServerUsage = `Usage: openmanus mcp-server [--transport stdio|http] [--port <n>] [--token <token>]

Serves OpenManus's tools over MCP, as OpenManus's run_mcp_server.py does: bash, browser_use,
str_replace_editor and terminate. Each client session has its own shell and edit history;
they share the workspace. The workspace's files are resources too (file:// URIs, at most 1 MB
each), with the prompts review_file and plan_task.

Options:
  --transport <t>    stdio (default): for a client that starts this command itself;
                     http: streamable HTTP at http://127.0.0.1:<port>/mcp, this machine only
  --port <n>         the HTTP port (default 8000; 0 picks a free one)
  --token <token>    the bearer token HTTP clients must send (default: $OPENMANUS_MCP_TOKEN,
                     else a new random one, printed at the start)
  --workspace <dir>  where bash starts and the only place the editor edits (default: ./workspace)
  --sandbox <mode>   isolation of bash: auto (default), bwrap or none, as for the agents
  -h, --help         show this help

Ctrl+C (or SIGTERM) stops the server: sessions end, their shells and processes are killed.`;

const parseArguments = (args: string[]) =>
  parseArgs({
    args,
    options: {
      transport: { type: 'string', default: 'stdio' },
      port: { type: 'string' },
      token: { type: 'string' },
      workspace: { type: 'string' },
      sandbox: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });

/** Resolves on the first SIGINT or SIGTERM; after it, a second one has its default effect (the process ends at once). */
export function firstStopSignal(): { readonly stopped: Promise<void>; dispose(): void } {
  let onSignal = () => {};
  const dispose = () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
  const stopped = new Promise<void>((resolve) => {
    onSignal = () => {
      dispose();
      resolve();
    };
  });
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return { stopped, dispose };
}

/** `openmanus mcp-server`: returns the exit code once the server has stopped. */
export async function mcpServerCommand(
  argv: string[],
  io: SessionIo,
  servedTools: readonly ServedTool[] = SERVED_TOOLS,
): Promise<number> {
  const fail = failure(io, 'openmanus mcp-server');
  let parsed: ReturnType<typeof parseArguments>;
  try {
    parsed = parseArguments(argv);
  } catch (error) {
    return fail(`${messageOf(error)}\n\n${mcpServerUsage}`);
  }
  const { values } = parsed;
  if (values.help) {
    io.stdout.write(`${mcpServerUsage}\n`);
    return 0;
  }
  const { transport } = values;
  if (transport !== 'stdio' && transport !== 'http') {
    return fail(`--transport must be "stdio" or "http", got "${transport}"`);
  }
  const http = transport === 'http';
  if (!http && (values.port !== undefined || values.token !== undefined)) {
    return fail('--port and --token are for --transport http');
  }
  const port = values.port === undefined ? 8000 : Number(values.port);
  if (!/^\d+$/.test(values.port ?? '0') || port > 65535) {
    return fail(`--port must be a port number (0 to 65535), got "${values.port}"`);
  }
  const token = values.token ?? (io.env.OPENMANUS_MCP_TOKEN || undefined);
  if (token !== undefined && token.trim() === '') return fail('--token is empty');
  const sandbox = sandboxOption(values.sandbox);
  if (!sandbox.isOk()) return fail(sandbox.error);

  const workspace = resolve(values.workspace ?? 'workspace');
  await mkdir(workspace, { recursive: true });
  const tools = servedTools.map((tool) => tool({ workspace, sandbox: sandbox.value ?? 'auto' }));
  const names = tools.map((tool) => tool.spec.name).join(', ');
  const server = createMcpServer(tools, {
    workspace,
    instructions: `Files are in ${workspace}: bash starts there (one shell per session: cd and variables carry over), and str_replace_editor takes absolute paths inside it. They can also be read as resources (file:// URIs).`,
    ...workspaceCatalog(workspace),
    onError: (error) => io.stderr.write(`openmanus mcp-server: ${terminalText(error.message)}\n`),
  });
  const signal = firstStopSignal();
  try {
    if (!http) {
      const session = await server.serveStdio();
      io.stderr.write(`openmanus mcp-server: serving ${names} over stdio; workspace ${workspace}\n`);
      await Promise.race([session.closed, signal.stopped]);
      return 0;
    }
    let serving: Awaited<ReturnType<typeof server.serveHttp>>;
    try {
      serving = await server.serveHttp({ port, ...(token !== undefined ? { token } : {}) });
    } catch (error) {
      const busy = (error as NodeJS.ErrnoException).code === 'EADDRINUSE' ? ': choose another --port' : '';
      return fail(`cannot serve on 127.0.0.1:${port}: ${messageOf(error)}${busy}`, 1);
    }
    io.stderr.write(
      [
        `openmanus mcp-server: serving ${names} over streamable HTTP`,
        `  url:       ${serving.url}`,
        token === undefined
          ? `  token:     ${serving.token}   (clients send "Authorization: Bearer <token>")`
          : '  token:     the one given (clients send "Authorization: Bearer <token>")',
        `  workspace: ${workspace}`,
        'Ctrl+C stops it.',
        '',
      ].join('\n'),
    );
    await signal.stopped;
    return 0;
  } finally {
    signal.dispose();
    await server.close();
  }
}
