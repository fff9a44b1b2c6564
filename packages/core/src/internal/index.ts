// @openmanus/core/internal: what the other @openmanus packages share with core and a user should not
// build on. INTERNAL AND UNSTABLE: any name here may change or go in any release, minor or patch,
// without notice; it is not covered by semver (as the AI SDK's `ai/internal`). Build on the root
// entry, `/kernel` and `/testing` instead.

// Building blocks of the LLM ports.
export { isReasoningModel, toOpenAiMessages } from '../llm/openai.js';
export { allowedHostOf } from '../manus/allowedHost.js';
// The local sandbox's parts: bubblewrap, process reaping, uid leases, exit statuses.
export {
  type BwrapOptions,
  bwrapCommand,
  hostPath,
  noticeOnce,
  type Probe,
  probeBwrap,
  sandboxEnv,
} from '../sandbox/bwrap.js';
export { type Ending, endingOfStatus, signalOfStatus } from '../sandbox/exitStatus.js';
export { type ProcessIsolation, spawnConfined } from '../sandbox/localProcess.js';
export { startTimeOf } from '../sandbox/processOwner.js';
export { canSwitchUser, leaseUid, lendWorkspace, reapMarked, stripSetuid } from '../sandbox/reaping.js';
// The shell's parts: the generic driver and what the agent's performers are made of.
export { type AbortLink, linkAbort } from '../shell/abort.js';
export {
  type Driven,
  type DriveOptions,
  type DriverControl,
  type DriverItem,
  drive,
  type Machine,
} from '../shell/driver.js';
export {
  type AccessPolicy,
  type AccessRequest,
  givenToken,
  LOOPBACK_HOSTS,
  MIN_TOKEN_LENGTH,
  newToken,
  type Refusal,
  refusalOf,
} from '../shell/httpAccess.js';
export { type ItemSink, itemStream } from '../shell/itemStream.js';
export { answerLlmCall } from '../shell/llmCall.js';
export { agentPerformers, type PerformerDeps } from '../shell/performers.js';
export { deltaLine, type RunLog, readRunLog, snapshotLine } from '../shell/runLog.js';
export { type ArrayTail, applyDelta, diffState, type StateDelta } from '../shell/stateDelta.js';
export {
  type CallToolEffect,
  executeTool,
  type ToolCallOptions,
  type ToolEvent,
  toolOutputOf,
} from '../shell/toolExecution.js';
export { createToolRun, type ToolCallHooks, type ToolRun, type ToolRunOptions } from '../shell/toolRun.js';
// Files confined to a workspace, as the built-in tools open them.
export { removeInside, writeAll } from '../tools/confinedFile.js';
export { type EditorPath, type OpenedPath, sandboxPath } from '../tools/editorFiles.js';
export { expandTabs } from '../tools/strReplaceEditor.js';
export { inside } from '../tools/workspace.js';
