import type { DBOSClient, WorkflowStatus } from '@dbos-inc/dbos-sdk';
import type { RunError, RunOutcome } from '@openmanus/core';
import { runErrorOf } from '@openmanus/core/kernel';
import { RunCancelledError } from './cancelled.js';
import type { RunProgress } from './durableRun.js';
import { FLOW_WORKFLOW, isContinuation, laterPartsPrefix, NEW_RUN_PRIORITY, RUN_QUEUE, RUN_WORKFLOW } from './names.js';

/** Where a run (or a flow) is: waiting for a worker, running, or ended with its outcome. */
export type RunInfo<Outcome = RunOutcome, Progress = RunProgress> =
  | { readonly runId: string; readonly status: 'queued' }
  | { readonly runId: string; readonly status: 'running'; readonly workerId?: string; readonly progress?: Progress }
  | { readonly runId: string; readonly status: 'ended'; readonly workerId?: string; readonly outcome: Outcome }
  /** Cancelled (`RUN_CANCELLED`), or its workflow threw (a family error's code, else `INTERNAL`). */
  | { readonly runId: string; readonly status: 'errored' | 'cancelled'; readonly error: RunError };

/**
 * The runs and flows in the system database, one id each: a long run is several workflows (it
 * continues as a fresh one every so many turns, `{runId}~continued-N`), followed here. A flow
 * never continues (its steps are runs of their own), so it is one workflow, read the same way.
 */
export interface Runs {
  /** Enqueues a new run or flow (the workflow `workflowName`) under `id` for the workers of this version; its id back. */
  enqueue(workflowName: string, id: string, request: unknown): Promise<string>;
  /** The newest part (the run itself until it first continued), and the one before it. */
  newestParts(runId: string): Promise<{ readonly head: WorkflowStatus; readonly before?: string } | undefined>;
  /** Its status now, typed by what it returns and publishes; `undefined` for an id never enqueued. */
  info<Outcome, Progress>(runId: string, what: RunKind): Promise<RunInfo<Outcome, Progress> | undefined>;
  /** Its outcome, once there; a `RunCancelledError` if it was cancelled. */
  result<Outcome>(runId: string, what: RunKind): Promise<Outcome>;
  /** The items of its stream `events` from the first, as they come, part after part; ends when it ends. */
  events<Item>(runId: string): AsyncIterable<Item>;
  /** Cancels it with everything it started. */
  cancel(runId: string): Promise<void>;
}

/** What an id names, for messages. */
export type RunKind = 'run' | 'flow';

export function runsOf(
  client: DBOSClient,
  {
    pollingIntervalMs,
    applicationVersion,
  }: { readonly pollingIntervalMs: number; readonly applicationVersion?: string },
): Runs {
  const newestParts: Runs['newestParts'] = async (runId) => {
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

  return {
    newestParts,
    info: async <Outcome, Progress>(runId: string, what: RunKind): Promise<RunInfo<Outcome, Progress> | undefined> => {
      const parts = await newestParts(runId);
      // A flow's id is no run's, and a run's no flow's: each is read as what it is, or not at all.
      if (!parts || parts.head.workflowName !== (what === 'flow' ? FLOW_WORKFLOW : RUN_WORKFLOW)) return undefined;
      const { head, before } = parts;
      const workerId = head.executorId ? { workerId: head.executorId } : {};
      const progressOf = async (workflowId: string) => {
        const progress = await client.getEvent<Progress>(workflowId, 'progress', 0);
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
          return { runId, status: 'ended', ...workerId, outcome: head.output as Outcome };
        case 'CANCELLED':
          return { runId, status: 'cancelled', error: { code: 'RUN_CANCELLED', message: `the ${what} was cancelled` } };
        default:
          return { runId, status: 'errored', error: runErrorOf(head.error, 'INTERNAL') };
      }
    },
    result: async <Outcome>(runId: string, what: RunKind): Promise<Outcome> => {
      for (let part = runId; ; ) {
        let result: unknown;
        try {
          result = await client.retrieveWorkflow(part).getResult({ pollingIntervalMs });
        } catch (error) {
          if ((await client.getWorkflow(part))?.status === 'CANCELLED')
            throw new RunCancelledError(`${what} "${runId}" was cancelled`);
          throw error;
        }
        if (!isContinuation(result)) return result as Outcome;
        part = result.continuedAs;
      }
    },
    events: async function* <Item>(runId: string): AsyncIterable<Item> {
      for (let part: string | undefined = runId; part !== undefined; ) {
        yield* client.readStream<Item>(part, 'events');
        const ended = await client.getWorkflow(part);
        part = isContinuation(ended?.output) ? ended.output.continuedAs : undefined;
      }
    },
    // A run's later parts are each started by the part before, as its child, and a flow's step
    // runs are its children: cancelling the first with its descendants stops the newest, and a
    // workflow being started meanwhile is refused by DBOS (its parent no longer owns its work).
    cancel: (runId) => client.cancelWorkflow(runId, { cancelChildren: true }),
    enqueue: async (workflowName, id, request) => {
      const handle = await client.enqueue(
        {
          queueName: RUN_QUEUE,
          workflowName,
          workflowID: id,
          priority: NEW_RUN_PRIORITY,
          ...(applicationVersion ? { appVersion: applicationVersion } : {}),
        },
        request,
      );
      return handle.workflowID;
    },
  };
}
