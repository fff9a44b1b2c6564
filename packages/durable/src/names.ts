/** Names workers and clients must agree on in the system database. */
export const APPLICATION = 'openmanus';
export const RUN_QUEUE = 'openmanus-runs';
export const RUN_WORKFLOW = 'openmanus.run';

/** What a client enqueues: which of the workers' agents runs, on what task. */
export interface RunRequest {
  readonly agent: string;
  readonly input: string;
}
