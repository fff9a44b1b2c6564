import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { Tool } from '@openmanus/core';

/**
 * The tools as an MCP server lists them, each with its JSON Schema as it is — enums, item types,
 * bounds and descriptions kept (OpenManus's server rebuilt a Python signature and lost them), with
 * the schema's own `$schema` back in (core keeps it aside: models are not sent it) and the output
 * schema of a tool that has one. Throws for a toolset MCP cannot serve: two tools of one name,
 * arguments or a structured result that is not an object.
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
    if (spec.outputSchema && spec.outputSchema.type !== 'object') {
      throw new Error(
        `The tool "${spec.name}" has an output schema of type ${JSON.stringify(spec.outputSchema.type)}; MCP's structured results are objects.`,
      );
    }
    return {
      name: spec.name,
      description: spec.description,
      inputSchema: (spec.schemaDialect !== undefined
        ? { $schema: spec.schemaDialect, ...spec.parameters }
        : spec.parameters) as McpTool['inputSchema'],
      ...(spec.outputSchema ? { outputSchema: spec.outputSchema as NonNullable<McpTool['outputSchema']> } : {}),
    };
  });
}
