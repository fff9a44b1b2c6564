import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { Tool } from '@openmanus/core';

/**
 * The tools as an MCP server lists them, each with its JSON Schema as it is — enums, item types,
 * bounds and descriptions kept (OpenManus's server rebuilt a Python signature and lost them).
 * Throws for a toolset MCP cannot serve: two tools of one name, arguments that are not an object.
 */
export function listTools(tools: readonly Tool[]): McpTool[] {
  const seen = new Set<string>();
  return tools.map(({ spec }) => {
    if (seen.has(spec.name)) throw new Error(`Two tools are named "${spec.name}": MCP needs each name once.`);
    seen.add(spec.name);
    if (spec.parameters.type !== 'object') {
      throw new Error(
        `The tool "${spec.name}" does not take an object of arguments (its JSON Schema's type is ${JSON.stringify(spec.parameters.type)}), which MCP requires.`,
      );
    }
    return {
      name: spec.name,
      description: spec.description,
      inputSchema: spec.parameters as McpTool['inputSchema'],
    };
  });
}
