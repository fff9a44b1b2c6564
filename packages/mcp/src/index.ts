// @openmanus/mcp: MCP servers' tools for our agents, the MCPAgent preset, and an MCP server for any toolset.
