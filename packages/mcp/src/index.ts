// @openmanus/mcp: MCP servers' tools for our agents, the MCPAgent preset, and an MCP server for any toolset.

// The client: MCP servers' tools for any agent, and the MCPAgent preset.
export {
  createMcpAgent,
  MCP_AGENT_NAME,
  type McpAgentOptions,
  mcpAgentNextStepPrompt,
  mcpAgentSystemPrompt,
} from './agents/mcpAgent.js';
export { type McpAgent, type WithMcpOptions, withMcp } from './agents/withMcp.js';
export {
  type LoadMcpConfigOptions,
  loadMcpConfig,
  type McpServerConfig,
  type McpServers,
  parseMcpServers,
  type RemoteServerConfig,
  type StdioServerConfig,
} from './client/config.js';
export type { McpContext } from './client/context.js';
// For a host's own form (a terminal's, a page's): the checks our client makes of an answer before it is sent.
export { checkElicitationAnswer, withSchemaDefaults } from './client/elicitationAnswer.js';
export {
  createMcpClient,
  type McpClient,
  type McpClientEvent,
  type McpClientOptions,
  type McpContextOptions,
  type McpRoot,
  type McpServerStatus,
} from './client/mcpClient.js';
export { MAX_TOOL_NAME, mcpToolName, sanitizeToolName, uniqueToolName } from './client/naming.js';
export type { McpCrossAppAccess } from './client/oauth/crossApp.js';
export { type LoopbackSignIn, type LoopbackSignInOptions, loopbackSignIn } from './client/oauth/loopback.js';
export {
  DEFAULT_REDIRECT_URL,
  type McpClientCredentials,
  type McpOAuthOptions,
  type McpOAuthProvider,
  type McpRedirect,
  type McpRedirectAnswer,
  oauthProvider,
} from './client/oauth/provider.js';
export {
  fileTokenStore,
  type McpAuthRecord,
  type McpTokenStore,
  memoryTokenStore,
} from './client/oauth/tokenStore.js';
export type { ReconnectPolicy, ServerState } from './client/serverLink.js';
export type { McpLogEntry, McpRequestContext, ServerRequestFallbacks } from './client/serverRequests.js';
export type { LeftOutTool } from './client/toolAdmission.js';
export type { TransportKind } from './client/transport.js';
// For a host's own prompt: what the blocks a server's results come in mean.
export { MCP_CONTENT_NOTE } from './client/untrusted.js';
// The server: any of our toolsets for MCP clients.
export {
  type CatalogNotifier,
  type CatalogOptions,
  DEFAULT_MAX_ARGUMENT_LENGTH,
  DEFAULT_MAX_RESOURCE_BYTES,
  type Listed,
} from './server/catalog.js';
export {
  definePrompt,
  type McpPrompt,
  type PromptArgs,
  type PromptArgumentSpec,
  type PromptContent,
  type PromptMessageSpec,
  type PromptOutcome,
  type TypedPrompt,
} from './server/catalogPrompts.js';
export {
  type CatalogScope,
  type Completer,
  type McpResource,
  type McpResourceTemplate,
  RESOURCE_NOT_FOUND,
  type ResourceContent,
  type ResourceInfo,
} from './server/catalogResources.js';
export type { EventBufferLimits } from './server/eventStore.js';
export type { HttpServeOptions, HttpServing } from './server/http.js';
export { createMcpServer, type McpServerOptions, type McpToolServer } from './server/mcpServer.js';
export type { McpSession } from './server/session.js';
export type { StdioServeOptions } from './server/stdio.js';
