import { type Agent, err, ok, type Result } from '@openmanus/core';
import { createMcpAgent, type McpOAuthOptions, type McpServerConfig } from '@openmanus/mcp';

/** The MCP server `openmanus mcp` takes its tools from, as its options say. */
export type McpServerTarget =
  /** A server this command starts and talks to over its stdin and stdout. */
  | { readonly connection: 'stdio'; readonly command: string; readonly args: readonly string[] }
  /** A running server: SSE (the older transport) or streamable HTTP. */
  | {
      readonly connection: 'sse' | 'http';
      readonly url: string;
      /** Sent with every request (`Authorization: Bearer …` from --token). */
      readonly headers: Readonly<Record<string, string>>;
    };

export interface McpAgentSettings {
  readonly server: McpServerTarget;
  readonly maxSteps: number;
  /** `max_input_tokens` of the agent's `[llm.mcp_agent]` profile. */
  readonly maxInputTokens?: number;
  /** For a server at a URL that answers 401: the OAuth sign-in and where its tokens are kept. */
  readonly oauth?: McpOAuthOptions;
}

/** The MCP agent with its server connected: runs tasks until `close` disconnects (and stops a stdio server). */
export interface ConnectedMcpAgent {
  readonly agent: Agent;
  /** What the person is told once it is connected: tools of the server that were left out, and why. */
  readonly notes?: readonly string[];
  close(): Promise<void>;
}

export type ConnectMcpAgent = (settings: McpAgentSettings) => Promise<Result<ConnectedMcpAgent, string>>;

/** The server's id: its tools reach the model as `mcp_server_<tool>`. */
export const MCP_SERVER_ID = 'server';

const serverConfig = (server: McpServerTarget, oauth: McpOAuthOptions | undefined): McpServerConfig =>
  server.connection === 'stdio'
    ? { command: server.command, args: [...server.args] }
    : { type: server.connection, url: server.url, headers: { ...server.headers }, ...(oauth ? { auth: oauth } : {}) };

const describe = (server: McpServerTarget) =>
  server.connection === 'stdio' ? [server.command, ...server.args].join(' ') : server.url;

/**
 * OpenManus's MCPAgent (run_mcp.py), `createMcpAgent` of @openmanus/mcp, connected to
 * `settings.server` before the first task: a server that cannot be reached is an error here, not a
 * run whose model is told it has no tools.
 */
export const connectMcpAgent: ConnectMcpAgent = async ({ server, maxSteps, maxInputTokens, oauth }) => {
  const agent = createMcpAgent({
    servers: { [MCP_SERVER_ID]: serverConfig(server, oauth) },
    maxSteps,
    ...(maxInputTokens !== undefined ? { maxInputTokens } : {}),
  });
  await agent.mcp.connect();
  const status = agent.mcp.status()[MCP_SERVER_ID];
  if (status?.state === 'connected') {
    const notes = status.leftOut.map(({ tool, reason }) => `the server's tool "${tool}" is left out: ${reason}`);
    return ok({ agent, notes, close: () => agent.close() });
  }
  // The client would retry in the background; the command gives up instead.
  await agent.close();
  return err(`cannot connect to the MCP server (${describe(server)}): ${status?.error ?? 'no answer'}`);
};
