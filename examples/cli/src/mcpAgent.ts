import { type Agent, err, type Result } from '@openmanus/core';

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
  /** `max_input_tokens` of the agent's `[llm.mcp]` profile. */
  readonly maxInputTokens?: number;
}

/** The MCP agent with its server connected: runs tasks until `close` disconnects (and stops a stdio server). */
export interface ConnectedMcpAgent {
  readonly agent: Agent;
  close(): Promise<void>;
}

export type ConnectMcpAgent = (settings: McpAgentSettings) => Promise<Result<ConnectedMcpAgent, string>>;

/**
 * OpenManus's MCPAgent (run_mcp.py) connected to `settings.server`: `createMcpAgent` of
 * @openmanus/mcp, which this build does not have yet — until it does, an error that says so.
 */
export const connectMcpAgent: ConnectMcpAgent = async () =>
  err(
    'the MCP client agent is not part of this build yet (createMcpAgent of @openmanus/mcp); ' +
      '`openmanus mcp-server` works, and any MCP client can use it.',
  );
