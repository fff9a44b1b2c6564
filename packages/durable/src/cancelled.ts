/** What waiting for a run or a flow that was cancelled throws (`waitForRun`, `waitForFlow`, a flow's step). */
export class RunCancelledError extends Error {
  override readonly name = 'RunCancelledError';
}
