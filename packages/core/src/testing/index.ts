export {
  type AnthropicServer,
  type AnthropicServerOptions,
  type RecordedAnthropicRequest,
  startAnthropicServer,
} from './anthropicServer.js';
export {
  type BedrockBlock,
  type BedrockServer,
  type BedrockServerOptions,
  type RecordedBedrockRequest,
  startBedrockServer,
} from './bedrockServer.js';
export {
  type GeminiPart,
  type GeminiServer,
  type GeminiServerOptions,
  type RecordedGeminiRequest,
  startGeminiServer,
} from './geminiServer.js';
export {
  assertLlmPortConforms,
  type ConformanceCheck,
  type ConformanceReport,
  type ConnectedPort,
  checkLlmPort,
  type PortCapabilities,
  type PortConformanceOptions,
} from './portConformance.js';
export { processesMatching } from './processes.js';
export type {
  Script,
  ScriptEntry,
  ScriptedAnswer,
  ScriptedFailure,
  ScriptedReply,
  ScriptedToolCall,
} from './script.js';
export {
  deliver,
  deliveredInPieces,
  piecesOf,
  retryHeaders,
  type ScriptedExchange,
  type ScriptedHttpOptions,
  type ScriptedHttpServer,
  type StandInOptions,
  type StandInServer,
  sendJson,
  startScriptedHttp,
  streamHeaders,
} from './scriptedHttp.js';
export { type ScriptedLlm, scriptedLlm } from './scriptedLlm.js';
export {
  type OpenAiServer,
  type OpenAiServerOptions,
  type RecordedRequest,
  startOpenAiServer,
} from './server.js';
export { type ToolSession, type ToolSessionOptions, toolSession } from './toolSession.js';
export { transcriptScript } from './transcriptScript.js';
