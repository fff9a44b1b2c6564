export * from './kernel/index.js';
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
export {
  type ApiType,
  createOpenAiLlm,
  isReasoningModel,
  type OpenAiLlmOptions,
  toOpenAiMessages,
} from './llm/openai.js';
export type { Placeholders } from './llm/placeholders.js';
export type { LlmPortOptions } from './llm/portOptions.js';
export { BUILT_IN_PRICES, callCost, type ModelPrice, type PriceTable, priceIn, priceOf } from './llm/prices.js';
export { parseToolCalls, toolsPrompt } from './llm/promptTools.js';
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
export { allowedHostOf } from './manus/allowedHost.js';
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
export {
  type BwrapOptions,
  bwrapCommand,
  hostPath,
  noticeOnce,
  type Probe,
  probeBwrap,
  type SandboxMode,
  sandboxEnv,
} from './sandbox/bwrap.js';
export { type Ending, endingOfStatus, signalOfStatus } from './sandbox/exitStatus.js';
export { type ProcessIsolation, spawnConfined } from './sandbox/localProcess.js';
export { createLocalSandboxProvider, type LocalSandboxOptions } from './sandbox/localProvider.js';
export { startTimeOf } from './sandbox/processOwner.js';
export { canSwitchUser, leaseUid, lendWorkspace, reapMarked, stripSetuid } from './sandbox/reaping.js';
export { sandboxFor } from './sandbox/runSandbox.js';
export { type AbortLink, linkAbort } from './shell/abort.js';
export { type AgentToolOptions, agentTool } from './shell/agentTool.js';
export {
  type Driven,
  type DriveOptions,
  type DriverControl,
  type DriverItem,
  drive,
  type Machine,
  type PerformContext,
  type Performer,
  type Performers,
} from './shell/driver.js';
export { createFileStore } from './shell/fileStore.js';
export { type ItemSink, itemStream } from './shell/itemStream.js';
export { answerLlmCall } from './shell/llmCall.js';
export { createMemoryStore } from './shell/memoryStore.js';
export {
  type AgentPerformer,
  type AgentPerformers,
  agentPerformers,
  type HostPerformers,
  type PerformerDeps,
} from './shell/performers.js';
export { type InvalidStateCode, InvalidStateError, restore } from './shell/restore.js';
export {
  RunInProgressError,
  type RunOptions,
  resume,
  resumeWith,
  run,
  type StartOptions,
  stream,
} from './shell/run.js';
export {
  compactRunItem,
  createRunEmitter,
  type ItemOrigin,
  type RunEmitter,
  type RunItem,
  type RunOutcome,
} from './shell/runItems.js';
export { deltaLine, type RunLog, readRunLog, snapshotLine } from './shell/runLog.js';
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
  type ToolScope,
} from './shell/scope.js';
export { type ArrayTail, diffState, type StateDelta } from './shell/stateDelta.js';
export { CheckpointConflictError, type CheckpointStore, type StoredRun } from './shell/store.js';
export {
  type CallToolEffect,
  executeTool,
  type ToolCallOptions,
  type ToolEvent,
  toolOutputOf,
} from './shell/toolExecution.js';
export { createToolRun, type ToolRun, type ToolRunOptions } from './shell/toolRun.js';
export { askHuman } from './tools/askHuman.js';
export { NotRegularFileError, type OpenMode, openInside, removeInside, writeAll } from './tools/confinedFile.js';
export {
  defineTool,
  type JsonToolDefinition,
  type Tool,
  type ToolDefinition,
  type ToolOutput,
  type ToolReturn,
  type ToolSuspension,
} from './tools/defineTool.js';
export { type EditorPath, type OpenedPath, sandboxPath } from './tools/editorFiles.js';
export { createPythonExecute, type PythonExecuteOptions } from './tools/pythonExecute.js';
export { createStrReplaceEditor, expandTabs, type StrReplaceEditorOptions } from './tools/strReplaceEditor.js';
export { terminate } from './tools/terminate.js';
export { confine, confineIn, inside, WorkspaceError } from './tools/workspace.js';
