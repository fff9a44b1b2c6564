import { DBOSClient, type WorkflowStatus } from '@dbos-inc/dbos-sdk';
import type { HostAnswer, PendingInput, RunOutcome } from '@openmanus/core';
import type { RunEventItem, RunProgress } from './durableRun.js';
import {
  APPLICATION,
  checkRunId,
  isContinuation,
  laterPartsPrefix,
  NEW_RUN_PRIORITY,
  RUN_QUEUE,
  RUN_WORKFLOW,
  type RunRequest,
} from './names.js';

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
export type RunInfo =
  | { readonly runId: string; readonly status: 'queued' }
  | { readonly runId: string; readonly status: 'running'; readonly workerId?: string; readonly progress?: RunProgress }
  | { readonly runId: string; readonly status: 'ended'; readonly workerId?: string; readonly outcome: RunOutcome }
  | { readonly runId: string; readonly status: 'errored' | 'cancelled'; readonly error: string };

export interface ApproveOptions {
  /** The approval to answer (default: every one the run waits for). */
  readonly effectId?: string;
  /** Denies instead, with this reason (the model reads it). */
  readonly reject?: string;
}

/** `waitForRun` of a run that was cancelled. */
export class RunCancelledError extends Error {
  override readonly name = 'RunCancelledError';
}

export interface DurableClient {
  /** Queues a run for the workers and returns its id. */
  enqueueRun(options: EnqueueRunOptions): Promise<string>;
  /** The run's status now, or `undefined` for an id never enqueued. */
  getRun(runId: string): Promise<RunInfo | undefined>;
  /**
   * Answers what the run waits for (its progress's `pending`): `{ type: 'approvalGiven', effectId }`,
   * `approvalDenied` with a reason, or `humanReplied` with the answer. Sent once per effect id.
   */
  answer(runId: string, answer: HostAnswer): Promise<void>;
  /**
   * Approves (or, with `reject`, denies) the calls the run waits to have approved; returns them.
   * Throws when the run waits for no such approval.
   */
  approve(runId: string, options?: ApproveOptions): Promise<readonly PendingInput[]>;
  /**
   * Stops the run, wherever it runs: nothing more of it is recorded, work in flight is stopped
   * (within about a second), and it never resumes. Returns the run's status after (`cancelled`,
   * or how it had ended before), or `undefined` for an id never enqueued.
   */
  cancel(runId: string): Promise<RunInfo | undefined>;
  /** The run's transitions from the first, as they happen; ends when the run ends. */
  streamEvents(runId: string): AsyncIterable<RunEventItem>;
  /** Waits for the run's outcome (a pause for a person is an outcome too); a `RunCancelledError` if it was cancelled. */
  waitForRun(runId: string): Promise<RunOutcome>;
  close(): Promise<void>;
}

/**
 * A client for any process (an API server, a CLI): enqueues runs and reads them; runs nothing
 * itself. A long run is several workflows (it continues as a fresh one every so many turns); the
 * client follows them, so a run is one id throughout.
 */
export async function createDurableClient(options: DurableClientOptions): Promise<DurableClient> {
  const client = await DBOSClient.create({ systemDatabaseUrl: options.databaseUrl, applicationName: APPLICATION });
  const pollingIntervalMs = options.pollingIntervalMs ?? 1000;

  /** The run's newest part (the run itself until it first continued), and the one before it. */
  const newestParts = async (runId: string): Promise<{ head: WorkflowStatus; before?: string } | undefined> => {
    const later = await client.listWorkflows({
      // A LIKE pattern (DBOS appends the `%`): the id's own `%` and `_` match only themselves.
      workflow_id_prefix: laterPartsPrefix(runId).replace(/[\\%_]/g, '\\$&'),
      sortDesc: true,
      limit: 2,
      loadInput: false,
    });
    const [head, before] = later;
    if (head) return { head, before: before?.workflowID ?? runId };
    const first = await client.getWorkflow(runId);
    return first ? { head: first } : undefined;
  };

  const getRun = async (runId: string): Promise<RunInfo | undefined> => {
    const parts = await newestParts(runId);
    if (!parts) return undefined;
    const { head, before } = parts;
    const workerId = head.executorId ? { workerId: head.executorId } : {};
    const progressOf = async (workflowId: string) => {
      const progress = await client.getEvent<RunProgress>(workflowId, 'progress', 0);
      return progress ? { progress } : {};
    };
    switch (head.status) {
      case 'ENQUEUED':
      case 'DELAYED':
        // A later part waiting for a worker: the run is under way, as far as the part before got.
        return before ? { runId, status: 'running', ...(await progressOf(before)) } : { runId, status: 'queued' };
      case 'PENDING':
        return { runId, status: 'running', ...workerId, ...(await progressOf(head.workflowID)) };
      case 'SUCCESS':
        return { runId, status: 'ended', ...workerId, outcome: head.output as RunOutcome };
      case 'CANCELLED':
        return { runId, status: 'cancelled', error: 'the run was cancelled' };
      default:
        return { runId, status: 'errored', error: describe(head.error) };
    }
  };

  const answer = async (runId: string, given: HostAnswer) => {
    // The part waiting for a person is the newest: a run never continues while it waits.
    const parts = await newestParts(runId);
    if (!parts) throw new Error(`no run has the id "${runId}"`);
    await client.send(parts.head.workflowID, given, given.effectId, `${runId}:${given.effectId}`);
  };

  return {
    enqueueRun: async ({ runId = crypto.randomUUID(), agent, input }) => {
      checkRunId(runId);
      const request: RunRequest = { agent, input };
      const handle = await client.enqueue(
        {
          queueName: RUN_QUEUE,
          workflowName: RUN_WORKFLOW,
          workflowID: runId,
          priority: NEW_RUN_PRIORITY,
          ...(options.applicationVersion ? { appVersion: options.applicationVersion } : {}),
        },
        request,
      );
      return handle.workflowID;
    },
    getRun,
    answer,
    approve: async (runId, { effectId, reject } = {}) => {
      const info = await getRun(runId);
      if (!info) throw new Error(`no run has the id "${runId}"`);
      const waiting = info.status === 'running' ? (info.progress?.pending ?? []) : [];
      const approvals = waiting.filter(
        (input) => input.kind === 'approval' && (effectId === undefined || input.effectId === effectId),
      );
      if (approvals.length === 0) {
        const what = effectId === undefined ? 'an approval' : `the approval of ${effectId}`;
        throw new Error(`run "${runId}" is not waiting for ${what} (it is ${info.status})`);
      }
      for (const { effectId: id } of approvals)
        await answer(
          runId,
          reject === undefined
            ? { type: 'approvalGiven', effectId: id }
            : { type: 'approvalDenied', effectId: id, reason: reject },
        );
      return approvals;
    },
    cancel: async (runId) => {
      // The run's later parts are each started by the part before, as its child: cancelling the
      // first with its descendants stops the newest, and a part being started meanwhile is
      // refused by DBOS (its parent no longer owns the run), so none slips through.
      await client.cancelWorkflow(runId, { cancelChildren: true });
      return getRun(runId);
    },
    streamEvents: async function* (runId) {
      for (let part: string | undefined = runId; part !== undefined; ) {
        yield* client.readStream<RunEventItem>(part, 'events');
        const ended = await client.getWorkflow(part);
        part = isContinuation(ended?.output) ? ended.output.continuedAs : undefined;
      }
    },
    waitForRun: async (runId) => {
      for (let part = runId; ; ) {
        let result: unknown;
        try {
          result = await client.retrieveWorkflow(part).getResult({ pollingIntervalMs });
        } catch (error) {
          if ((await client.getWorkflow(part))?.status === 'CANCELLED')
            throw new RunCancelledError(`run "${runId}" was cancelled`);
          throw error;
        }
        if (!isContinuation(result)) return result as RunOutcome;
        part = result.continuedAs;
      }
    },
    close: () => client.destroy(),
  };
}

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));
