import type { DBOSClient } from '@dbos-inc/dbos-sdk';
import type { FlowOutcome } from '@openmanus/flow';
import type { DurableClientOptions, RunInfo } from './client.js';
import type { FlowEventItem, FlowProgress, StoredFlowItem } from './durableFlow.js';
import type { RunEventItem } from './durableRun.js';
import { FLOW_WORKFLOW, type FlowRequest, RUN_QUEUE } from './names.js';

export interface EnqueueFlowOptions extends FlowRequest {
  /** The flow's id (default a new UUID); enqueueing an id again returns the flow already there. Its executors' runs are `{flowId}/{effect id}`. */
  readonly flowId?: string;
}

/** Where a flow is: its progress while it runs (`progress.runId` is the executor's run in flight), its outcome once ended. */
export type FlowInfo = RunInfo<FlowOutcome, FlowProgress>;

/** A client's flow methods (see `DurableClient`). */
export interface DurableFlowClient {
  /** Queues a planning flow for the workers (one of their `flows`) and returns its id. */
  enqueueFlow(options: EnqueueFlowOptions): Promise<string>;
  /** The flow's status now, or `undefined` for an id never enqueued. */
  getFlow(flowId: string): Promise<FlowInfo | undefined>;
  /** Waits for the flow's outcome. */
  waitForFlow(flowId: string): Promise<FlowOutcome>;
  /** The flow's transitions from the first and, in their place, each executor run's; ends when the flow ends. */
  streamFlowEvents(flowId: string): AsyncIterable<FlowEventItem>;
}

/** A run's status read from the engine, typed by what the workflow returns and publishes. */
export type WorkflowInfo = <Outcome, Progress>(runId: string) => Promise<RunInfo<Outcome, Progress> | undefined>;

export function flowClient(client: DBOSClient, options: DurableClientOptions, infoOf: WorkflowInfo): DurableFlowClient {
  return {
    enqueueFlow: async ({ flowId = crypto.randomUUID(), flow, input }) => {
      const request: FlowRequest = { flow, input };
      const handle = await client.enqueue(
        {
          queueName: RUN_QUEUE,
          workflowName: FLOW_WORKFLOW,
          workflowID: flowId,
          ...(options.applicationVersion ? { appVersion: options.applicationVersion } : {}),
        },
        request,
      );
      return handle.workflowID;
    },
    getFlow: (flowId) => infoOf<FlowOutcome, FlowProgress>(flowId),
    waitForFlow: (flowId) =>
      client.retrieveWorkflow<FlowOutcome>(flowId).getResult({ pollingIntervalMs: options.pollingIntervalMs ?? 1000 }),
    streamFlowEvents: async function* (flowId) {
      for await (const stored of client.readStream<StoredFlowItem>(flowId, 'events')) {
        if (stored.type === 'flow') {
          yield stored;
          continue;
        }
        // The flow waits for this run: its items come next, as they happen, until it ends.
        const { type: _run, ...run } = stored;
        for await (const item of client.readStream<RunEventItem>(run.runId, 'events'))
          yield { type: 'agent', ...run, item };
      }
    },
  };
}
