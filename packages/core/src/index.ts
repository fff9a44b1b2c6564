export type {
  Agent,
  AgentConfig,
  AgentConfigInput,
  AgentInput,
  ContextGatherer,
  MemoryPolicy,
  TokenizerName,
  ToolChoice,
} from './agent.js';
export { createAgent, defaultAgentConfig, defineAgent } from './agent.js';
export {
  type ConfigError,
  createLlmFromConfig,
  describeConfigError,
  type LlmSettings,
  type LoadConfigOptions,
  llmSettingsFor,
  loadConfig,
  type OpenManusConfig,
  openAiOptionsFrom,
} from './config.js';
export type { ContextProvider, ContextState, RequestAdditions } from './context.js';
export type {
  Effect,
  EffectType,
  LlmRequest,
  Observation,
  RunResult,
} from './effects.js';
export type { AgentEvent, AgentEventType, LlmUsage } from './events.js';
export {
  type ApprovalDecision,
  compactRunItem,
  createRunEmitter,
  executeTool,
  type RunEmitter,
  RunInProgressError,
  type RunItem,
  type RunOptions,
  type RunOutcome,
  resume,
  resumeWith,
  run,
  type StartOptions,
  stream,
} from './interpreter.js';
export type {
  LlmCallOptions,
  LlmError,
  LlmErrorKind,
  LlmPort,
  LlmResponse,
} from './llm.js';
export { describeLlmError } from './llm.js';
export { createManus, type ManusOptions, manusNextStepPrompt, manusSystemPrompt } from './manus.js';
export { selectWindow } from './memory.js';
export type {
  AssistantMessage,
  ImageData,
  Message,
  Role,
  SystemMessage,
  ToolCall,
  ToolMessage,
  UserMessage,
} from './messages.js';
export { assistantMessage, systemMessage, userMessage } from './messages.js';
export {
  type ApiType,
  createOpenAiLlm,
  isReasoningModel,
  type OpenAiLlmOptions,
  toOpenAiMessages,
} from './openai.js';
export { parseToolCalls, toolsPrompt } from './promptTools.js';
export {
  InvalidEventError,
  initialState,
  initialStep,
  step,
  type Transition,
} from './reducer.js';
export { buildRequest } from './request.js';
export type {
  AgentState,
  CallPhase,
  FinishReason,
  PendingCall,
  RunStatus,
  StuckState,
  Turn,
  Usage,
} from './state.js';
export { isFinal, restoreState, SCHEMA_VERSION } from './state.js';
export {
  imageTokens,
  loadTokenizer,
  messageTokens,
  requestTokens,
  textTokens,
} from './tokens.js';
export type {
  JsonSchema,
  Tool,
  ToolContext,
  ToolDefinition,
  ToolOutput,
  ToolReturn,
  ToolSpec,
} from './tool.js';
export { defineTool } from './tool.js';
export { askHuman } from './tools/askHuman.js';
export { createPythonExecute, type PythonExecuteOptions, pythonCommand } from './tools/pythonExecute.js';
export { createStrReplaceEditor, expandTabs, type StrReplaceEditorOptions } from './tools/strReplaceEditor.js';
export { terminate } from './tools/terminate.js';
export { confine, WorkspaceError } from './tools/workspace.js';
