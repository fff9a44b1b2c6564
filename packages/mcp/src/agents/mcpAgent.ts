import { createAgent, defaultPolicies, type Tool, terminate } from '@openmanus/core';
import type { McpServers } from '../client/config.js';
import type { McpClient } from '../client/mcpClient.js';
import { type McpAgent, type WithMcpOptions, withMcp } from './withMcp.js';

/** The MCPAgent's name, which is also its `[llm.<profile>]` of config.toml. */
export const MCP_AGENT_NAME = 'mcp_agent';

export const mcpAgentSystemPrompt = [
  'You are an AI assistant whose tools come from Model Context Protocol (MCP) servers.',
  'Use them to complete the task: pick the tool that fits each step, give it well-formed arguments,',
  'and read its result before you decide the next step.',
  'The tools can change while you work: new ones may appear and others may go away, and you are told when.',
  'If a tool fails, read the error and try another way.',
  'When the task is done, or cannot be done, say what was achieved and call `terminate`.',
].join(' ');

export const mcpAgentNextStepPrompt = [
  'Given what you have learned so far and the tools you have now, what should be done next?',
  'Use the most useful tool for this stage; when the task is complete, summarise the outcome and call `terminate`.',
].join(' ');

export type McpAgentOptions = Omit<WithMcpOptions, 'name'> & {
  /** Most steps a task may take: the agent's `stepLimit` (default 20, OpenManus's). */
  readonly maxSteps?: number;
  readonly maxObserve?: number;
  /** Most input tokens one request may carry: a `tokenBudget` (config.toml's `max_input_tokens`); none by default. */
  readonly maxInputTokens?: number;
  readonly systemPrompt?: string;
  readonly nextStepPrompt?: string;
  /** `[llm.<profile>]` of config.toml to use (default `mcp_agent`, the agent's name). */
  readonly llmProfile?: string;
  /** Tools of ours beside the servers' (terminate is always there). */
  readonly extraTools?: readonly Tool[];
} & (
    | { readonly servers: McpServers; readonly client?: never }
    | { readonly client: McpClient; readonly servers?: never }
  );

/**
 * OpenManus's MCPAgent: "mcp_agent", at most 20 steps (observations cut at 10000 characters, with a
 * marker, as Manus's), the servers' tools listed again every 5 steps
 * (and whenever a server says they changed), and our `terminate` to finish — OpenManus named its
 * terminate `mcp_…_terminate`, which its own check never matched. Close it with `agent.close()` when
 * it was given servers (see `withMcp` for the lifetime of the connections).
 */
export function createMcpAgent(options: McpAgentOptions): McpAgent {
  const {
    servers,
    client,
    maxSteps,
    maxObserve,
    maxInputTokens,
    systemPrompt,
    nextStepPrompt,
    llmProfile,
    extraTools,
    ...rest
  } = options;
  const source = client ?? servers;
  if (source === undefined) throw new TypeError('createMcpAgent needs servers or a client');
  const agent = createAgent({
    name: MCP_AGENT_NAME,
    description: 'An agent that solves tasks with the tools of MCP servers.',
    systemPrompt: systemPrompt ?? mcpAgentSystemPrompt,
    nextStepPrompt: nextStepPrompt ?? mcpAgentNextStepPrompt,
    tools: [...(extraTools ?? []), terminate],
    // OpenManus kept observations whole; a server's 10 MB answer must not fill the context.
    maxObserve: maxObserve ?? 10_000,
    llmProfile: llmProfile ?? MCP_AGENT_NAME,
    policies: defaultPolicies({ maxSteps: maxSteps ?? 20, maxInputTokens }),
  });
  return withMcp(agent, source, rest);
}
