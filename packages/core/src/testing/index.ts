export { scriptedLlm, type ScriptedLlm } from './scriptedLlm.js';
export {
  startOpenAiServer,
  type OpenAiServer,
  type OpenAiServerOptions,
  type RecordedRequest,
} from './server.js';
export type {
  Script,
  ScriptEntry,
  ScriptedReply,
  ScriptedAnswer,
  ScriptedFailure,
  ScriptedToolCall,
} from './script.js';
export { processesMatching } from './processes.js';
