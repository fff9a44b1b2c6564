import { DBOS } from '@dbos-inc/dbos-sdk';
import type { Agent, LlmPort, RunOutcome } from '@openmanus/core';
import { dbosRuntime } from './dbosRuntime.js';
import { type DecisionGuard, decisionGuard } from './decisionGuard.js';
import { type DecisionStore, decisionStore } from './decisionStore.js';
import { decisionKey } from './decisions.js';
import { serveFlows, type WorkerFlow } from './durableFlowWorker.js';
import { type DurableRunOptions, durableRun } from './durableRun.js';
import { launchWithRunQueue } from './launch.js';
import {
  APPLICATION,
  CONTINUATION_PRIORITY,
  type Continuation,
  continuationId,
  type ExecutorRunRequest,
  RUN_QUEUE,
  RUN_WORKFLOW,
  type RunPart,
} from './names.js';
import { type Reaper, startReaper } from './reaper.js';
import { lockWorkerId, type WorkerLock } from './workerLock.js';

/** An agent a worker can run, with its model and run options. */
export interface WorkerAgent extends Omit<DurableRunOptions, 'llm' | 'state' | 'checkAnswer'> {
  readonly agent: Agent;
  readonly llm: LlmPort;
}

export interface WorkerOptions {
  /** The Postgres database DBOS keeps runs in (created on first use when the user may). */
  readonly databaseUrl: string;
  /**
   * Unique and stable across restarts (a host or pod name): a worker restarted under the same id
   * resumes the runs it had in flight; two live workers must never share one.
   */
  readonly workerId: string;
  /**
   * The version of the agents' code. Runs resume only on workers of the version they started on:
   * bump it when a change would replay differently (new tools, a changed prompt).
   */
  readonly applicationVersion: string;
  /**
   * The secret people's decisions are signed with (`generateDecisionKey()`, at least 32
   * characters): the worker takes an approval, a denial, an answer or a cancel only when it
   * carries an HMAC under this key, which clients make with the same key (`createDurableClient({
   * decisionKey })`). Every worker of a database has the same one; keep it out of the database.
   */
  readonly decisionKey: string;
  /** The agents this worker runs, by the name clients enqueue them under. */
  readonly agents: Readonly<Record<string, WorkerAgent>>;
  /** The planning flows this worker runs, by the name clients enqueue them under (`enqueueFlow`). */
  readonly flows?: Readonly<Record<string, WorkerFlow>>;
  /**
   * Most runs this process works on at once (default 10). DBOS keeps it with the queue, for every
   * worker: the worker started last sets it for all of them (give every worker the same).
   */
  readonly concurrency?: number;
  /**
   * How often the queue is polled for new runs (and a resumed flow checks on its step's run), in
   * ms (default 1000); like `concurrency`, one for all workers.
   */
  readonly pollingIntervalMs?: number;
  /** How often this worker looks for dead workers' runs to hand on, in ms (default 1000). */
  readonly reapIntervalMs?: number;
}

export interface Worker {
  readonly workerId: string;
  /**
   * Stops taking runs, disconnects, then stops the work in flight (nothing more is recorded): the
   * runs resume from their last recorded step when a worker of this id starts again, or on a live
   * worker that finds this one gone.
   */
  stop(): Promise<void>;
}

// DBOS is one per process: the agents of the running worker, read by the one registered workflow.
let serving: Readonly<Record<string, WorkerAgent>> | undefined;
// Aborted when the worker stops, once DBOS can record nothing more: work in flight ends.
let stopping = new AbortController();
// What takes people's decisions for the running worker's runs.
let guard: DecisionGuard | undefined;

const runWorkflow = DBOS.registerWorkflow(
  async (request: ExecutorRunRequest | RunPart): Promise<RunOutcome | Continuation> => {
    const entry = serving?.[request.agent];
    if (!entry || !guard) throw new Error(`this worker has no agent named "${request.agent}"`);
    const { agent, ...options } = entry;
    const part = 'continued' in request ? request.continued : undefined;
    // A flow's step starts its executor's run on the executor's memory of earlier steps (`state`).
    const memory = !part && 'state' in request && request.state ? { state: request.state } : {};
    const runtime = dbosRuntime(part?.runId);
    const end = await durableRun(runtime, agent, part ? part.state : request.input, {
      ...options,
      ...memory,
      checkAnswer: guard.checkAnswer,
      signal: options.signal ? AbortSignal.any([options.signal, stopping.signal]) : stopping.signal,
    });
    if (end.type === 'ended') return end.outcome;
    // Continue-as-new: the next part starts from the state (recorded as this workflow's child,
    // so a replay of this part finds it started and does not start another), then this one ends.
    const next = (part?.part ?? 1) + 1;
    const workflowID = continuationId(runtime.runId, next);
    await DBOS.startWorkflow(runWorkflow, {
      workflowID,
      queueName: RUN_QUEUE,
      enqueueOptions: { priority: CONTINUATION_PRIORITY },
    })({
      agent: request.agent,
      input: request.input,
      continued: { runId: runtime.runId, part: next, state: end.state },
    });
    return { continuedAs: workflowID };
  },
  { name: RUN_WORKFLOW },
);

/**
 * Starts this process's worker: claims its id (a `WorkerIdInUseError` when a live worker holds
 * it), connects to Postgres, resumes the runs this worker id had in flight, then takes queued runs
 * (see `createDurableClient().enqueueRun`) and hands dead workers' runs on. One worker per process.
 */
export async function startWorker(options: WorkerOptions): Promise<Worker> {
  if (serving) throw new Error('a worker is already running in this process');
  const { databaseUrl, workerId, applicationVersion } = options;
  const key = decisionKey(options.decisionKey);
  serving = options.agents;
  stopping = new AbortController();
  let unserveFlows = () => {};
  let lock: WorkerLock | undefined;
  let store: DecisionStore | undefined;
  let reaper: Reaper;
  try {
    unserveFlows = serveFlows(options, runWorkflow, stopping.signal, async (runId, why) => {
      if (!guard) throw new Error('the worker has stopped');
      await guard.signCancel(runId, why);
    });
    // Claimed before DBOS recovers this id's runs, so no reaper hands them on meanwhile.
    lock = await lockWorkerId(databaseUrl, workerId);
    store = decisionStore(databaseUrl);
    const taking = decisionGuard(key, store, lock, workerId, applicationVersion);
    guard = taking;
    DBOS.setConfig({
      name: APPLICATION,
      systemDatabaseUrl: databaseUrl,
      applicationVersion,
      executorID: workerId,
      logLevel: 'warn',
    });
    await launchWithRunQueue(lock, databaseUrl, {
      workerConcurrency: options.concurrency ?? 10,
      minPollingIntervalMs: options.pollingIntervalMs ?? 1000,
    });
    // Clients check their key against it before they send a decision the workers would refuse.
    await store.publishKey(workerId, key.fingerprint);
    reaper = startReaper(lock, workerId, applicationVersion, options.reapIntervalMs ?? 1000, taking.undoForgedCancels);
  } catch (error) {
    serving = undefined;
    guard = undefined;
    unserveFlows();
    await DBOS.shutdown().catch(() => undefined);
    await store?.close().catch(() => undefined);
    await lock?.close().catch(() => undefined);
    throw error;
  }
  const held = lock;
  const decisions = store;
  return {
    workerId,
    stop: async () => {
      await reaper.stop();
      await DBOS.shutdown();
      stopping.abort(new Error('the worker stopped'));
      await held.close();
      await decisions.close();
      serving = undefined;
      guard = undefined;
      unserveFlows();
    },
  };
}
