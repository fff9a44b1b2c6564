import type { AgentState } from '@openmanus/core';

/** Names workers and clients must agree on in the system database. */
export const APPLICATION = 'openmanus';
export const RUN_QUEUE = 'openmanus-runs';
export const RUN_WORKFLOW = 'openmanus.run';
export const FLOW_WORKFLOW = 'openmanus.flow';

/** What a client enqueues: which of the workers' agents runs, on what task. */
export interface RunRequest {
  readonly agent: string;
  readonly input: string;
}

/** What a flow starts for one of its steps: a run of an executor, continuing its memory of earlier steps. */
export interface ExecutorRunRequest extends RunRequest {
  readonly state?: AgentState;
}

/** What a client enqueues for a flow: which of the workers' flows runs, on what task. */
export interface FlowRequest {
  readonly flow: string;
  readonly input: string;
}
