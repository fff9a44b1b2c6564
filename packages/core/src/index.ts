export type {
  Agent,
  AgentConfig,
  AgentConfigInput,
  AgentInput,
  ContextGatherer,
  MemoryPolicy,
  TokenizerName,
  ToolChoice,
} from './kernel/agent.js';
export { createAgent, defaultAgentConfig, defineAgent } from './kernel/agent.js';
export type { ContextProvider, ContextState, RequestAdditions } from './kernel/context.js';
export type {
  Effect,
  EffectType,
  LlmRequest,
  Observation,
  RunResult,
} from './kernel/effects.js';
export type { AgentEvent, AgentEventType, LlmUsage } from './kernel/events.js';
export { selectWindow } from './kernel/memory.js';
export type {
  AssistantMessage,
  ImageData,
  Message,
  Role,
  SystemMessage,
  ToolCall,
  ToolMessage,
  UserMessage,
} from './kernel/messages.js';
export { assistantMessage, systemMessage, userMessage } from './kernel/messages.js';
export {
  InvalidEventError,
  initialState,
  initialStep,
  step,
  type Transition,
} from './kernel/reducer.js';
export { buildRequest } from './kernel/request.js';
export type {
  AgentState,
  CallPhase,
  FinishReason,
  PendingCall,
  RunStatus,
  StuckState,
  Turn,
  Usage,
} from './kernel/state.js';
export { isFinal, restoreState, SCHEMA_VERSION } from './kernel/state.js';
export {
  imageTokens,
  loadTokenizer,
  messageTokens,
  requestTokens,
  textTokens,
} from './kernel/tokens.js';
export type {
  JsonSchema,
  Tool,
  ToolContext,
  ToolDefinition,
  ToolOutput,
  ToolReturn,
  ToolSpec,
} from './kernel/tool.js';
export { defineTool } from './kernel/tool.js';
export type {
  LlmCallOptions,
  LlmError,
  LlmErrorKind,
  LlmPort,
  LlmResponse,
} from './llm/llm.js';
export { describeLlmError } from './llm/llm.js';
export {
  type ApiType,
  createOpenAiLlm,
  isReasoningModel,
  type OpenAiLlmOptions,
  toOpenAiMessages,
} from './llm/openai.js';
export { parseToolCalls, toolsPrompt } from './llm/promptTools.js';
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
} from './manus/config.js';
export { createManus, type ManusOptions, manusNextStepPrompt, manusSystemPrompt } from './manus/manus.js';
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
} from './shell/interpreter.js';
export { askHuman } from './tools/askHuman.js';
export { createPythonExecute, type PythonExecuteOptions, pythonCommand } from './tools/pythonExecute.js';
export { createStrReplaceEditor, expandTabs, type StrReplaceEditorOptions } from './tools/strReplaceEditor.js';
export { terminate } from './tools/terminate.js';
export { confine, WorkspaceError } from './tools/workspace.js';
