export { FlowCancelledError } from './cancelled.js';
export {
  type ApproveOptions,
  createDurableClient,
  type DurableClient,
  type DurableClientOptions,
  type EnqueueRunOptions,
  type Refusal,
  RunCancelledError,
  type RunInfo,
} from './client.js';
export { dbosRuntime } from './dbosRuntime.js';
export {
  AlreadyDecidedError,
  DecisionKeyError,
  describeDecision,
  generateDecisionKey,
  type SignedDecision,
} from './decisions.js';
export {
  type DurableFlowOptions,
  type DurableFlowRuntime,
  durableFlow,
  type FlowEventBrief,
  type FlowEventItem,
  type FlowProgress,
} from './durableFlow.js';
export type { DurableFlowClient, EnqueueFlowOptions, FlowInfo } from './durableFlowClient.js';
export type { WorkerFlow } from './durableFlowWorker.js';
export {
  type DurableRunEnd,
  type DurableRunOptions,
  durableRun,
  type RunEventItem,
  type RunProgress,
} from './durableRun.js';
export type { ExecutorRunRequest, FlowRequest, RunRequest } from './names.js';
export { createPostgresStore, type PostgresStore, type PostgresStoreOptions } from './postgresStore.js';
export { recordedPerformers } from './recordedPerformers.js';
export type { DurableRuntime } from './runtime.js';
export { startWorker, type Worker, type WorkerAgent, type WorkerOptions } from './worker.js';
export { WorkerIdInUseError } from './workerLock.js';
