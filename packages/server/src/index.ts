// @openmanus/server: agents over HTTP in any Node backend, and the studio that inspects their runs.
export { LOOPBACK_HOSTS } from '@openmanus/core/internal';
export type { ServerToken } from './access.js';
export { fastifyPlugin } from './fastify.js';
export {
  createMemoryJournal,
  type JournalEntry,
  type JournalSummary,
  type RunJournal,
  type RunRecord,
  type SentMessage,
  type SentRequest,
  type TraceLink,
} from './journal.js';
export { type NodeListener, toNodeListener } from './node.js';
export type { QuarantinedRun } from './quarantine.js';
export {
  type Decision,
  type ForkRequest,
  type LegTraceLink,
  type Principal,
  RequestRefusedError,
  type RunFilter,
  type RunMessage,
  type RunSummary,
  type Runs,
  type RunsPage,
  type Subscriber,
  type TraceLeg,
} from './runs.js';
export { type AgentServer, type Authorize, createServer, type ServerOptions } from './server.js';
export { createSqliteJournal } from './sqliteJournal.js';
export type { Change } from './states.js';
export type { AgentChanges, Divergence, ReplayReport } from './timeTravel.js';
export type { ChildTrace, ModelCallView, RunTrace, ToolCallView, TransitionView } from './trace.js';
export { VERSION } from './version.js';
export type { PendingView, RunView, TimelineEntry, UsageView } from './view.js';
