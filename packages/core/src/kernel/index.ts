// @openmanus/core/kernel: the pure agent loop and its data — no I/O, nothing from the shell.
// Other packages' reducers (flows) import from here so that they stay pure too.

export {
  hasErrorCode,
  type LlmFailureCode,
  OpenManusError,
  type OpenManusErrorCode,
  type ResultErrorCode,
  type RunStopCode,
  runErrorOf,
  type ThrownErrorCode,
} from '../errors.js';
export { err, errAsync, ok, okAsync, Result, ResultAsync } from '../result.js';
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
export { type ApprovalRule, requireApproval, withApprovals } from './approvals.js';
export type { HistorySummary, HistoryTokens, SummarizePolicy } from './compaction.js';
export type { ContextProvider, ContextState, RequestAdditions } from './context.js';
export type {
  AnyEffect,
  CacheHints,
  Effect,
  EffectType,
  HostEffect,
  LlmRequest,
  Observation,
  RunResult,
} from './effects.js';
export type { AgentEvent, AgentEventType, AnyEvent, HostAnswer, HostEvent, LlmCallAnswer, LlmUsage } from './events.js';
export { type HistoryShrunk, type HistoryWindow, sentHistory, shrinkHistory } from './historyWindow.js';
export { selectWindow, type TokenBudget, windowStart } from './memory.js';
export type {
  AssistantMessage,
  ImageData,
  Message,
  ReasoningPart,
  Role,
  SystemMessage,
  ToolCall,
  ToolMessage,
  UserMessage,
} from './messages.js';
export { assistantMessage, lastAnswer, systemMessage, userMessage } from './messages.js';
export {
  type DefaultPolicyOptions,
  defaultPolicies,
  definePolicy,
  type InputTokenBudget,
  isStepLimit,
  isTokenBudget,
  type Policy,
  type PolicyContext,
  type StepLimit,
  type Stop,
  type StuckDetection,
  stepLimit,
  stuckDetection,
  type TokenBudgetOptions,
  terminalTools,
  tokenBudget,
} from './policies.js';
export {
  createStep,
  InvalidEventError,
  initialState,
  initialStep,
  interruptedNote,
  pendingInputs,
  type StepFunction,
  step,
  type Transition,
} from './reducer.js';
export { buildRequest } from './request.js';
export type { RunError } from './runError.js';
export type {
  AgentState,
  CallPhase,
  ElicitationForm,
  FinishReason,
  PendingCall,
  PendingInput,
  RunStatus,
  Turn,
  Usage,
} from './state.js';
export { addUsage, costOf, emptyUsage, isFinal, SCHEMA_VERSION, usageSince } from './state.js';
export type { StuckMemory, StuckThresholds } from './stuck.js';
export {
  imageTokens,
  loadTokenizer,
  messageTokens,
  requestTokens,
  textTokens,
  tokenizerReady,
} from './tokens.js';
export type { JsonSchema, ToolSpec } from './tool.js';
