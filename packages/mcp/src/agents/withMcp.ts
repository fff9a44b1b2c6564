import type { Agent, ContextGatherer } from '@openmanus/core';
import type { McpServers } from '../client/config.js';
import { createMcpClient, type McpClient, type McpClientOptions, type McpContextOptions } from '../client/mcpClient.js';
import { MCP_CONTENT_NOTE } from '../client/untrusted.js';

/** An agent with the tools of MCP servers, and the client that connects them. */
export interface McpAgent extends Agent {
  readonly mcp: McpClient;
  /** Closes the client if this agent made it (from servers); a client passed in is its owner's to close. */
  close(): Promise<void>;
}

export interface WithMcpOptions extends McpContextOptions, Omit<McpClientOptions, 'servers'> {
  /**
   * The agent's workspace: the servers' roots when `roots` is not given (default: the workspace of
   * each run, `RunOptions.workspace`, when it has one). Only for a client made from servers.
   */
  readonly workspace?: string;
}

const isClient = (source: McpClient | McpServers): source is McpClient =>
  typeof (source as McpClient).context === 'function' && typeof (source as McpClient).close === 'function';

/**
 * Any agent (Manus, SWE, one of yours) with the tools of MCP servers. The servers connect when the
 * first run starts, and stay connected for the runs after it — of this agent and of any other the
 * same client was given — until `close()`. Each run gets the tools as they are at each step.
 *
 * Lifetime: pass servers, and the agent owns its client (`agent.close()` disconnects it); pass a
 * client, and its owner closes it (one client can serve several agents and sessions). A run that
 * ends closes nothing but its own resources.
 *
 * The system prompt gets `MCP_CONTENT_NOTE` (once, however many clients the agent has): the servers'
 * results come in blocks marked untrusted, and the model is told what they mean.
 */
export function withMcp(agent: Agent, source: McpClient | McpServers, options: WithMcpOptions = {}): McpAgent {
  const { name, refreshEvery, workspace, ...clientOptions } = options;
  const owned = !isClient(source);
  // The roots a host gave win; else the servers may work in the agent's workspace.
  const workspaceRoots = owned && clientOptions.roots === undefined;
  const roots = workspaceRoots && workspace !== undefined ? { roots: [workspace] } : {};
  const mcp = isClient(source) ? source : createMcpClient({ ...clientOptions, ...roots, servers: source });
  const context = mcp.context({
    ...(name !== undefined ? { name } : {}),
    ...(refreshEvery !== undefined ? { refreshEvery } : {}),
  });
  const { provider } = context;
  let rootsFromRun: string | undefined;
  const gatherer: ContextGatherer =
    workspaceRoots && workspace === undefined
      ? async (scope) => {
          if (scope.workspace !== undefined && scope.workspace !== rootsFromRun) {
            rootsFromRun = scope.workspace;
            await mcp.setRoots([scope.workspace]);
          }
          return context.gatherer(scope);
        }
      : context.gatherer;
  if (agent.config.contextProviders?.some((existing) => existing.name === provider.name)) {
    throw new Error(
      `agent "${agent.config.name}" already has a context provider named "${provider.name}": give withMcp another name`,
    );
  }
  return {
    ...agent,
    config: {
      ...agent.config,
      systemPrompt: withNote(agent.config.systemPrompt),
      contextProviders: [...(agent.config.contextProviders ?? []), provider],
    },
    contextGatherers: { ...agent.contextGatherers, [provider.name]: gatherer },
    // A resumed run's call of a server's tool (approved, or answered, after a restart) finds it here.
    findTool: async (toolName, scope) => {
      const found = await agent.findTool?.(toolName, scope);
      if (found) return found;
      await mcp.connect();
      return mcp.tools().find((tool) => tool.spec.name === toolName);
    },
    mcp,
    close: () => (owned ? mcp.close() : Promise.resolve()),
  };
}

const withNote = (prompt: string) =>
  prompt.includes(MCP_CONTENT_NOTE) ? prompt : [prompt, MCP_CONTENT_NOTE].filter(Boolean).join('\n\n');
