import { DBOS } from '@dbos-inc/dbos-sdk';
import type { Agent, LlmPort, RunOutcome } from '@openmanus/core';
import { dbosRuntime } from './dbosRuntime.js';
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
export interface WorkerAgent extends Omit<DurableRunOptions, 'llm' | 'state'> {
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

const runWorkflow = DBOS.registerWorkflow(
  async (request: ExecutorRunRequest | RunPart): Promise<RunOutcome | Continuation> => {
    const entry = serving?.[request.agent];
    if (!entry) throw new Error(`this worker has no agent named "${request.agent}"`);
    const { agent, ...options } = entry;
    const part = 'continued' in request ? request.continued : undefined;
    // A flow's step starts its executor's run on the executor's memory of earlier steps (`state`).
    const memory = !part && 'state' in request && request.state ? { state: request.state } : {};
    const runtime = dbosRuntime(part?.runId);
    const end = await durableRun(runtime, agent, part ? part.state : request.input, {
      ...options,
      ...memory,
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
  serving = options.agents;
  stopping = new AbortController();
  let unserveFlows = () => {};
  let lock: WorkerLock | undefined;
  let reaper: Reaper;
  try {
    unserveFlows = serveFlows(options, runWorkflow, stopping.signal);
    // Claimed before DBOS recovers this id's runs, so no reaper hands them on meanwhile.
    lock = await lockWorkerId(databaseUrl, workerId);
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
    reaper = startReaper(lock, workerId, applicationVersion, options.reapIntervalMs ?? 1000);
  } catch (error) {
    serving = undefined;
    unserveFlows();
    await DBOS.shutdown().catch(() => undefined);
    await lock?.close().catch(() => undefined);
    throw error;
  }
  const held = lock;
  return {
    workerId,
    stop: async () => {
      await reaper.stop();
      await DBOS.shutdown();
      stopping.abort(new Error('the worker stopped'));
      await held.close();
      serving = undefined;
      unserveFlows();
    },
  };
}
