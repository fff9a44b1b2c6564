import { DBOSClient } from '@dbos-inc/dbos-sdk';
import type { HostAnswer, RunOutcome } from '@openmanus/core';
import { type DurableFlowClient, flowClient } from './durableFlowClient.js';
import type { RunEventItem, RunProgress } from './durableRun.js';
import { APPLICATION, RUN_QUEUE, RUN_WORKFLOW, type RunRequest } from './names.js';

export interface DurableClientOptions {
  readonly databaseUrl: string;
  /** The workers' application version: only workers of this version take the runs enqueued (default: the newest). */
  readonly applicationVersion?: string;
  /** How often `waitForRun` checks the run, in ms (default 1000). */
  readonly pollingIntervalMs?: number;
}

export interface EnqueueRunOptions extends RunRequest {
  /** The run's id (default a new UUID); enqueueing an id again returns the run already there. */
  readonly runId?: string;
}

/** Where a run is: waiting for a worker, running, or ended with its outcome. */
export type RunInfo<Outcome = RunOutcome, Progress = RunProgress> =
  | { readonly runId: string; readonly status: 'queued' }
  | { readonly runId: string; readonly status: 'running'; readonly workerId?: string; readonly progress?: Progress }
  | { readonly runId: string; readonly status: 'ended'; readonly workerId?: string; readonly outcome: Outcome }
  | { readonly runId: string; readonly status: 'errored' | 'cancelled'; readonly error: string };

export interface DurableClient extends DurableFlowClient {
  /** Queues a run for the workers and returns its id. */
  enqueueRun(options: EnqueueRunOptions): Promise<string>;
  /** The run's status now, or `undefined` for an id never enqueued. */
  getRun(runId: string): Promise<RunInfo | undefined>;
  /**
   * Answers what the run waits for (its progress's `pending`): `{ type: 'approvalGiven', effectId }`,
   * `approvalDenied` with a reason, or `humanReplied` with the answer. Sent once per effect id.
   */
  answer(runId: string, answer: HostAnswer): Promise<void>;
  /** The run's transitions from the first, as they happen; ends when the run ends. */
  streamEvents(runId: string): AsyncIterable<RunEventItem>;
  /** Waits for the run's outcome (a pause for a person is an outcome too). */
  waitForRun(runId: string): Promise<RunOutcome>;
  close(): Promise<void>;
}

/** A client for any process (an API server, a CLI): enqueues runs and reads them; runs nothing itself. */
export async function createDurableClient(options: DurableClientOptions): Promise<DurableClient> {
  const client = await DBOSClient.create({ systemDatabaseUrl: options.databaseUrl, applicationName: APPLICATION });
  // A run's or a flow's: the same statuses, typed by what the workflow returns and publishes.
  const infoOf = async <Outcome, Progress>(runId: string): Promise<RunInfo<Outcome, Progress> | undefined> => {
    const found = await client.getWorkflow(runId);
    if (!found) return undefined;
    const workerId = found.executorId ? { workerId: found.executorId } : {};
    switch (found.status) {
      case 'ENQUEUED':
        return { runId, status: 'queued' };
      case 'PENDING': {
        const progress = await client.getEvent<Progress>(runId, 'progress', 0);
        return { runId, status: 'running', ...workerId, ...(progress ? { progress } : {}) };
      }
      case 'SUCCESS':
        return { runId, status: 'ended', ...workerId, outcome: found.output as Outcome };
      case 'CANCELLED':
        return { runId, status: 'cancelled', error: 'the run was cancelled' };
      default:
        return { runId, status: 'errored', error: describe(found.error) };
    }
  };
  return {
    ...flowClient(client, options, infoOf),
    enqueueRun: async ({ runId = crypto.randomUUID(), agent, input }) => {
      const request: RunRequest = { agent, input };
      const handle = await client.enqueue(
        {
          queueName: RUN_QUEUE,
          workflowName: RUN_WORKFLOW,
          workflowID: runId,
          ...(options.applicationVersion ? { appVersion: options.applicationVersion } : {}),
        },
        request,
      );
      return handle.workflowID;
    },
    getRun: (runId) => infoOf<RunOutcome, RunProgress>(runId),
    answer: (runId, answer) => client.send(runId, answer, answer.effectId, `${runId}:${answer.effectId}`),
    streamEvents: (runId) => client.readStream<RunEventItem>(runId, 'events'),
    waitForRun: (runId) =>
      client.retrieveWorkflow<RunOutcome>(runId).getResult({ pollingIntervalMs: options.pollingIntervalMs ?? 1000 }),
    close: () => client.destroy(),
  };
}

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));
