/** What waiting for a run or a flow that was cancelled throws (`waitForRun`, `waitForFlow`, a flow's step). */
export class RunCancelledError extends Error {
  override readonly name = 'RunCancelledError';
}

/**
 * What a flow's wait for its step's run throws when the flow itself was cancelled with it: the
 * flow stops there, instead of taking the step's cancelled run for a failed attempt.
 */
export class FlowCancelledError extends Error {
  override readonly name = 'FlowCancelledError';
}
