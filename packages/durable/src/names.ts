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

/**
 * A later part of a long run (continue-as-new): the workflow that ran the part before started
 * this one with the run's state, then ended. Its id is `continuationId(runId, part)`.
 */
export interface RunPart extends RunRequest {
  readonly continued: { readonly runId: string; readonly part: number; readonly state: AgentState };
}

/** What a part that handed the run on ends with instead of the run's outcome. */
export interface Continuation {
  readonly continuedAs: string;
}

const PART = '~continued-';

/** The workflow id of part `part` (2, 3, …) of a run; part 1 is the run's own id. */
export const continuationId = (runId: string, part: number): string => `${laterPartsPrefix(runId)}${part}`;

/** What the ids of a run's later parts begin with. */
export const laterPartsPrefix = (runId: string): string => `${runId}${PART}`;

/** Run ids, and flow ids (their steps' runs are `{flowId}/{effect id}`), must leave the ids of later parts free. */
export function checkRunId(id: string, what: 'run' | 'flow' = 'run'): void {
  if (id.includes(PART))
    throw new Error(`a ${what} id cannot contain "${PART}" (it names the later parts of long runs)`);
}

export const isContinuation = (output: unknown): output is Continuation =>
  typeof output === 'object' && output !== null && typeof (output as Continuation).continuedAs === 'string';

/**
 * Queue priorities (lower goes first): a long run's next part goes ahead of runs not started
 * yet, so a run in flight is never stalled behind a backlog.
 */
export const CONTINUATION_PRIORITY = 0;
export const NEW_RUN_PRIORITY = 1;
