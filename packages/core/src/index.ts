export type {
  Message,
  Role,
  ToolCall,
  ImageData,
  SystemMessage,
  UserMessage,
  AssistantMessage,
  ToolMessage,
} from './messages.js';
export { systemMessage, userMessage, assistantMessage } from './messages.js';
export type {
  ToolSpec,
  Tool,
  ToolOutput,
  ToolContext,
  ToolReturn,
  ToolDefinition,
  JsonSchema,
} from './tool.js';
export { defineTool } from './tool.js';
export type { ContextProvider, ContextState, RequestAdditions } from './context.js';
export type {
  AgentConfig,
  AgentConfigInput,
  Agent,
  AgentInput,
  ContextGatherer,
  ToolChoice,
  MemoryPolicy,
  TokenizerName,
} from './agent.js';
export { defineAgent, createAgent, defaultAgentConfig } from './agent.js';
export type {
  AgentState,
  RunStatus,
  FinishReason,
  Usage,
  PendingCall,
  CallPhase,
  Turn,
  StuckState,
} from './state.js';
export { SCHEMA_VERSION, isFinal, restoreState } from './state.js';
export type { AgentEvent, AgentEventType, LlmUsage } from './events.js';
export type {
  Effect,
  EffectType,
  LlmRequest,
  Observation,
  RunResult,
} from './effects.js';
export {
  step,
  initialStep,
  initialState,
  InvalidEventError,
  type Transition,
} from './reducer.js';
export { buildRequest } from './request.js';
export { selectWindow } from './memory.js';
export {
  loadTokenizer,
  textTokens,
  messageTokens,
  requestTokens,
  imageTokens,
} from './tokens.js';
export type {
  LlmPort,
  LlmResponse,
  LlmError,
  LlmErrorKind,
  LlmCallOptions,
} from './llm.js';
export { describeLlmError } from './llm.js';
export {
  createOpenAiLlm,
  isReasoningModel,
  toOpenAiMessages,
  type OpenAiLlmOptions,
  type ApiType,
} from './openai.js';
export { parseToolCalls, toolsPrompt } from './promptTools.js';
export {
  run,
  resume,
  answer,
  stream,
  executeTool,
  createRunEmitter,
  RunInProgressError,
  type RunOptions,
  type RunOutcome,
  type RunItem,
  type RunEmitter,
  type ApprovalDecision,
} from './interpreter.js';
export { createManus, manusSystemPrompt, manusNextStepPrompt, type ManusOptions } from './manus.js';
export { createPythonExecute, pythonCommand, type PythonExecuteOptions } from './tools/pythonExecute.js';
export { createStrReplaceEditor, expandTabs, type StrReplaceEditorOptions } from './tools/strReplaceEditor.js';
export { askHuman } from './tools/askHuman.js';
export { terminate } from './tools/terminate.js';
export { confine, WorkspaceError } from './tools/workspace.js';
export {
  loadConfig,
  createLlmFromConfig,
  llmSettingsFor,
  openAiOptionsFrom,
  describeConfigError,
  type OpenManusConfig,
  type LlmSettings,
  type ConfigError,
  type LoadConfigOptions,
} from './config.js';
