// @openmanus/mcp: MCP servers' tools for our agents, the MCPAgent preset, and an MCP server for any toolset.

export type { HttpServeOptions, HttpServing } from './server/http.js';
export { createMcpServer, type McpServerOptions, type McpToolServer } from './server/mcpServer.js';
export type { McpSession } from './server/session.js';
export type { StdioServeOptions } from './server/stdio.js';
