import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { defineTool, err, type JsonSchema, type Result, type Tool, type ToolScope } from '@openmanus/core';
import type { McpTool } from './connection.js';
import { callQuestions } from './elicitationPause.js';
import { toToolReturn } from './results.js';
import { mcpContent } from './untrusted.js';

/** Calls a tool of a server by its own name for a call of ours (its scope); failures come back as messages for the model. */
export type CallMcpTool = (
  tool: string,
  args: Record<string, unknown>,
  scope: ToolScope,
) => Promise<Result<CallToolResult, string>>;

/** The longest description of a tool the model gets (every request carries it). */
export const MAX_DESCRIPTION = 10_000;

const cut = (text: string) =>
  text.length > MAX_DESCRIPTION ? `${text.slice(0, MAX_DESCRIPTION)}…[description cut]` : text;

/**
 * What the model reads of a tool: the server's words in its untrusted block (a description can carry
 * a prompt injection as well as a result can), or, for a tool without one (OpenManus refused it), our hint.
 */
function descriptionOf(serverId: string, tool: McpTool): string {
  const written = tool.description || tool.title;
  return written ? mcpContent(serverId, cut(written)) : `${tool.name}, a tool of the MCP server "${serverId}".`;
}

/**
 * A server's tool as one of ours, named `name` for the model. Its JSON Schema (bounded by
 * `admitTools`) goes to the model as the server wrote it (core only drops `$schema`), and the server
 * validates the arguments itself.
 * A tool the server calls `terminate` ends the run like ours (OpenManus's prefixed name never matched).
 */
export function mcpClientTool(
  serverId: string,
  tool: McpTool,
  name: string,
  options: { readonly call: CallMcpTool; readonly timeoutMs: number },
): Tool {
  return defineTool<Record<string, unknown>>({
    name,
    description: descriptionOf(serverId, tool),
    parameters: tool.inputSchema as JsonSchema,
    ...(tool.name === 'terminate' ? { terminal: true } : {}),
    ...(tool.annotations?.readOnlyHint === true ? { parallelSafe: true } : {}),
    timeoutMs: options.timeoutMs,
    execute: async (args, scope) => {
      const questions = callQuestions(scope, serverId, tool.name, name, args);
      if (questions.askAgain) return questions.askAgain;
      // A call stopped because the run pauses on its question ends with that pause, however it ended.
      const called = await options.call(tool.name, args, questions.scope).catch((error: unknown) => {
        if (questions.suspension()) return undefined;
        throw error;
      });
      const paused = questions.suspension();
      if (paused || !called) return paused ?? err('the call ended without a result');
      return called.isOk() ? toToolReturn(called.value, serverId) : err(called.error);
    },
  });
}
