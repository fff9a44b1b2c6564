// @openmanus/core: what a user builds with — agents, tools, run/stream/resume, stores, policies,
// approvals, errors, LLM ports and the main types. The pure loop's parts are in
// `@openmanus/core/kernel`, the test kit in `@openmanus/core/testing`; `@openmanus/core/internal`
// holds what the other @openmanus packages share with core (unstable, not for users).

// Errors: the family's base and every error a host can meet from core; results.
export {
  hasErrorCode,
  type LlmFailureCode,
  OpenManusError,
  type OpenManusErrorCode,
  type ResultErrorCode,
  type RunStopCode,
  type ThrownErrorCode,
} from './errors.js';
// Agents and presets.
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
export { createAgent, defineAgent } from './kernel/agent.js';
// Policies and approvals.
export { type ApprovalRule, requireApproval, withApprovals } from './kernel/approvals.js';
export type { SummarizePolicy } from './kernel/compaction.js';
export type { ContextProvider } from './kernel/context.js';
// Running an agent: run, stream, resume, and what a run says.
export type { AnyEffect, Effect, HostEffect, Observation, RunResult } from './kernel/effects.js';
export type { AgentEvent, AnyEvent, HostAnswer, HostEvent } from './kernel/events.js';
export type { ImageData, Message, ToolCall } from './kernel/messages.js';
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
} from './kernel/policies.js';
export { InvalidEventError, initialStep, type StepFunction, step, type Transition } from './kernel/reducer.js';
export type { RunError } from './kernel/runError.js';
export type { AgentState, ElicitationForm, FinishReason, PendingInput, RunStatus, Usage } from './kernel/state.js';
export { costOf, isFinal } from './kernel/state.js';
export type { StuckMemory, StuckThresholds } from './kernel/stuck.js';
// Tools.
export type { JsonSchema, ToolSpec } from './kernel/tool.js';
export type { EmbeddedResource, ToolContent } from './kernel/toolContent.js';
// LLM ports.
export { type AiSdkLlmOptions, type AiSdkModel, fromAiSdk } from './llm/aiSdk.js';
export { type AnthropicLlmOptions, createAnthropicLlm } from './llm/anthropic.js';
export { type BedrockLlmOptions, createBedrockLlm } from './llm/bedrock.js';
export { limitConcurrency } from './llm/concurrency.js';
export { createGoogleLlm, type GoogleLlmOptions } from './llm/google.js';
export type {
  LlmCallOptions,
  LlmDelta,
  LlmError,
  LlmErrorKind,
  LlmFinishReason,
  LlmPort,
  LlmResponse,
  ToolCallDelta,
} from './llm/llm.js';
export { describeLlmError, runErrorOfLlm } from './llm/llm.js';
export { type ApiType, createOpenAiLlm, type OpenAiLlmOptions } from './llm/openai.js';
export type { Placeholders } from './llm/placeholders.js';
export type { LlmPortOptions } from './llm/portOptions.js';
export {
  BUILT_IN_PRICES,
  callCost,
  type ModelPrice,
  type PriceTable,
  priceIn,
  priceOf,
} from './llm/prices.js';
// For ports of models without native tool calls: the tools in the prompt, the calls in the reply.
export { parseToolCalls, toolsPrompt } from './llm/promptTools.js';
// Record and replay.
export { type RecordingLlm, type RecordOptions, recordLlm } from './llm/record.js';
export { type ReplayLlm, type ReplayOptions, replayLlm } from './llm/replay.js';
export {
  loadTranscript,
  parseTranscript,
  type RecordedAnswer,
  type RecordedFailure,
  type RecordedReply,
  type RecordedToolCall,
  type RequestFingerprint,
  TRANSCRIPT_VERSION,
  type Transcript,
  TranscriptError,
} from './llm/transcript.js';
// config.toml.
export {
  type BrowserSettings,
  type ConfigError,
  createLlmFromConfig,
  describeConfigError,
  type LlmSettings,
  type LoadConfigOptions,
  llmSettingsFor,
  loadConfig,
  type OpenManusConfig,
  openAiOptionsFrom,
  type SearchEngineName,
  type SearchSettings,
} from './manus/config.js';
export { createManus, type ManusOptions, manusNextStepPrompt, manusSystemPrompt } from './manus/manus.js';
export { messageOf } from './messageOf.js';
export { err, errAsync, ok, okAsync, Result, ResultAsync } from './result.js';
// Sandboxes: where tools run.
export type { SandboxMode } from './sandbox/bwrap.js';
export { createLocalSandboxProvider, type LocalSandboxOptions } from './sandbox/localProvider.js';
export { sandboxFor } from './sandbox/runSandbox.js';
export { type AgentToolOptions, agentTool } from './shell/agentTool.js';
export type { PerformContext, Performer, Performers } from './shell/driver.js';
// Stores.
export { createFileStore } from './shell/fileStore.js';
export { createMemoryStore } from './shell/memoryStore.js';
export type { Outcome, SharedRunOptions } from './shell/outcome.js';
export type { AgentPerformer, AgentPerformers, HostPerformers } from './shell/performers.js';
export { type InvalidStateCode, InvalidStateError, restore } from './shell/restore.js';
export {
  RunInProgressError,
  type RunOptions,
  resume,
  resumeWith,
  run,
  type StartOptions,
  stream,
  streamResume,
  streamResumeWith,
} from './shell/run.js';
export {
  compactRunItem,
  createRunEmitter,
  type ItemOrigin,
  type RunEmitter,
  type RunItem,
  type RunOutcome,
} from './shell/runItems.js';
export type {
  DirectoryEntry,
  ExecOptions,
  ExecResult,
  PreviewLink,
  Sandbox,
  SandboxProcess,
  SandboxProvider,
  SandboxRequest,
} from './shell/sandboxPort.js';
export {
  type ApprovalDecision,
  createResourcePool,
  type HostCallbacks,
  type ResourcePool,
  type RunScope,
  type ToolRelay,
  type ToolScope,
} from './shell/scope.js';
export { CheckpointConflictError, type CheckpointStore, type StoredRun } from './shell/store.js';
export {
  type ElicitationAnswer,
  type ElicitationRequest,
  type ElicitationResult,
  type FormElicitationRequest,
  LOG_LEVELS,
  type LogLevel,
  type SamplingContent,
  type SamplingMedia,
  type SamplingMessage,
  type SamplingRequest,
  type SamplingResult,
  type SamplingText,
  type SamplingTool,
  type SamplingToolResult,
  type SamplingToolUse,
  type ToolProgress,
  type UrlElicitationRequest,
} from './shell/toolRequests.js';
export { askHuman } from './tools/askHuman.js';
// For tools of your own: files opened inside the workspace (links and `..` never lead out), and what
// an error says, whatever was thrown.
export { NotRegularFileError, type OpenMode, openInside } from './tools/confinedFile.js';
export {
  defineTool,
  type JsonToolDefinition,
  type Tool,
  type ToolDefinition,
  type ToolOutput,
  type ToolReturn,
  type ToolSuspension,
} from './tools/defineTool.js';
export { createPythonExecute, type PythonExecuteOptions } from './tools/pythonExecute.js';
export { createStrReplaceEditor, type StrReplaceEditorOptions } from './tools/strReplaceEditor.js';
export { terminate } from './tools/terminate.js';
export { confine, confineIn, WorkspaceError } from './tools/workspace.js';
