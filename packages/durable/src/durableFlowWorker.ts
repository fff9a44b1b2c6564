import { DBOS, type WorkflowHandle } from '@dbos-inc/dbos-sdk';
import type { LlmPort, RunOutcome } from '@openmanus/core';
import { createPlanningFlow, type FlowOutcome, type PlanningFlow, type PlanningFlowOptions } from '@openmanus/flow';
import { FlowCancelledError, RunCancelledError } from './cancelled.js';
import { dbosRuntime } from './dbosRuntime.js';
import { type DurableFlowRuntime, durableFlow } from './durableFlow.js';
import {
  type Continuation,
  type ExecutorRunRequest,
  FLOW_WORKFLOW,
  type FlowRequest,
  isContinuation,
  type RunPart,
} from './names.js';
import type { WorkerAgent, WorkerOptions } from './worker.js';

/**
 * A planning flow a worker runs. Its agents are the worker's own, by name: each step is a durable
 * run of one of them, with that agent's model and options.
 */
export interface WorkerFlow extends Omit<PlanningFlowOptions, 'agents'> {
  /** The flow's agents: names of the worker's agents, the primary first. */
  readonly agents: readonly string[];
  /** The model for the plan and the summary. */
  readonly llm: LlmPort;
}

/** The worker's registered agent-run workflow: a flow starts its executors' runs with it. */
export type RunWorkflow = (request: ExecutorRunRequest | RunPart) => Promise<RunOutcome | Continuation>;

interface ServedFlows {
  readonly flows: ReadonlyMap<string, { readonly flow: PlanningFlow; readonly llm: LlmPort }>;
  readonly runWorkflow: RunWorkflow;
  /** How often a flow checks on its step's run (its later parts, and after a replay). */
  readonly pollingIntervalMs: number;
  /** Aborted when the worker stops: the flows' work in flight ends. */
  readonly stopped: AbortSignal;
  /** Signs the flow's own cancel of a step's run, which the worker would otherwise undo. */
  readonly signCancel: (runId: string, why: string) => Promise<void>;
}

// DBOS is one per process: the flows of the running worker, read by the one registered workflow.
let serving: ServedFlows | undefined;

DBOS.registerWorkflow(
  async (request: FlowRequest): Promise<FlowOutcome> => {
    const served = serving?.flows.get(request.flow);
    if (!serving || !served) throw new Error(`this worker has no flow named "${request.flow}"`);
    return durableFlow(dbosFlowRuntime(serving), served.flow, request.input, {
      llm: served.llm,
      signal: serving.stopped,
    });
  },
  { name: FLOW_WORKFLOW },
);

/**
 * The worker's hook for flows: checks each of its flows against its agents (a `TypeError` naming
 * what is wrong) and serves them until the returned function is called.
 */
export function serveFlows(
  options: WorkerOptions,
  runWorkflow: RunWorkflow,
  stopped: AbortSignal,
  signCancel: ServedFlows['signCancel'],
): () => void {
  const { agents, flows = {}, pollingIntervalMs = 1000 } = options;
  const made = new Map<string, { flow: PlanningFlow; llm: LlmPort }>();
  for (const [name, { agents: names, llm, ...flowOptions }] of Object.entries(flows)) {
    const missing = names.filter((key) => !agents[key]);
    if (missing.length > 0)
      throw new TypeError(`flow "${name}" names agents this worker does not have: ${missing.join(', ')}`);
    const byName = Object.fromEntries(names.map((key) => [key, (agents[key] as WorkerAgent).agent]));
    made.set(name, { flow: createPlanningFlow({ ...flowOptions, agents: byName }), llm });
  }
  serving = { flows: made, runWorkflow, pollingIntervalMs, stopped, signCancel };
  return () => {
    serving = undefined;
  };
}

/** The flow's runtime in DBOS: an executor's run is the worker's run workflow, started as a child under its id. */
function dbosFlowRuntime({ runWorkflow, pollingIntervalMs, signCancel }: ServedFlows): DurableFlowRuntime {
  return {
    ...dbosRuntime(),
    startRun: async (runId, request) => {
      const first = await DBOS.startWorkflow(runWorkflow, { workflowID: runId })(request);
      return {
        outcome: () => finalOutcome(runId, first, pollingIntervalMs),
        // A step of the flow: its later parts are its children, cancelled with it.
        cancel: async () => {
          await signCancel(runId, 'its flow ran out of time');
          await DBOS.cancelWorkflow(runId, { cancelChildren: true });
        },
      };
    },
  };
}

/**
 * The run's outcome: a long run continues as fresh parts (each started by the one before), so its
 * outcome is its last part's. Each wait is a recorded step of the flow: a replay reads them back.
 */
async function finalOutcome(
  runId: string,
  first: WorkflowHandle<RunOutcome | Continuation>,
  pollingIntervalMs: number,
): Promise<RunOutcome> {
  for (let part = first; ; ) {
    let result: RunOutcome | Continuation;
    try {
      result = await part.getResult({ pollingIntervalMs });
    } catch (error) {
      if ((await DBOS.getWorkflowStatus(part.workflowID))?.status === 'CANCELLED') {
        // Cancelled with its flow (`cancelFlow`): the flow may hear of its run first.
        const flowId = DBOS.workflowID;
        if (flowId && (await DBOS.getWorkflowStatus(flowId))?.status === 'CANCELLED')
          throw new FlowCancelledError(`flow "${flowId}" was cancelled`);
        // Cancelled on its own (`cancel(runId)`): the flow judges the step as a run that failed.
        throw new RunCancelledError(`run "${runId}" was cancelled`);
      }
      throw error;
    }
    if (!isContinuation(result)) return result;
    part = DBOS.retrieveWorkflow<RunOutcome | Continuation>(result.continuedAs);
  }
}
