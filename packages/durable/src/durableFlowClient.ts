import type { FlowOutcome } from '@openmanus/flow';
import type { FlowEventItem, FlowProgress, StoredFlowItem } from './durableFlow.js';
import type { RunEventItem } from './durableRun.js';
import { checkRunId, FLOW_WORKFLOW, type FlowRequest } from './names.js';
import type { RunInfo, Runs } from './runs.js';

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
  /** Waits for the flow's outcome; a `RunCancelledError` if it was cancelled. */
  waitForFlow(flowId: string): Promise<FlowOutcome>;
  /**
   * Stops the flow and the run of its step in flight, wherever they run: nothing more of either is
   * recorded, and neither resumes. Returns the flow's status after (`cancelled`, or how it had
   * ended before), or `undefined` for an id never enqueued. Signed with the decision key, as `cancel`.
   */
  cancelFlow(flowId: string): Promise<FlowInfo | undefined>;
  /** The flow's transitions from the first and, in their place, each executor run's; ends when the flow ends. */
  streamFlowEvents(flowId: string): AsyncIterable<FlowEventItem>;
}

/** `cancel`: the client's signed cancel of an id that exists. */
export function flowClient(runs: Runs, cancel: (id: string) => Promise<void>): DurableFlowClient {
  const getFlow = (flowId: string) => runs.info<FlowOutcome, FlowProgress>(flowId, 'flow');
  return {
    enqueueFlow: async ({ flowId = crypto.randomUUID(), flow, input }) => {
      checkRunId(flowId, 'flow');
      const request: FlowRequest = { flow, input };
      return runs.enqueue(FLOW_WORKFLOW, flowId, request);
    },
    getFlow,
    waitForFlow: (flowId) => runs.result<FlowOutcome>(flowId, 'flow'),
    cancelFlow: async (flowId) => {
      if (!(await runs.newestParts(flowId))) return undefined;
      await cancel(flowId);
      return getFlow(flowId);
    },
    streamFlowEvents: async function* (flowId) {
      for await (const stored of runs.events<StoredFlowItem>(flowId)) {
        if (stored.type === 'flow') {
          yield stored;
          continue;
        }
        // The flow waits for this run: its items come next, as they happen, part after part, until it ends.
        const { type: _run, ...run } = stored;
        for await (const item of runs.events<RunEventItem>(run.runId)) yield { type: 'agent', ...run, item };
      }
    },
  };
}
