import { hasErrorCode, OpenManusError } from '@openmanus/core';

/** What waiting for a run or a flow that was cancelled throws (`waitForRun`, `waitForFlow`, a flow's step). */
export class RunCancelledError extends OpenManusError<'RUN_CANCELLED'> {
  static readonly codes = ['RUN_CANCELLED'] as const;
  override readonly name = 'RunCancelledError';
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super('RUN_CANCELLED', message, options);
  }
  static override isInstance(value: unknown): value is RunCancelledError {
    return hasErrorCode(value, RunCancelledError.codes);
  }
}

/**
 * What a flow's wait for its step's run throws when the flow itself was cancelled with it: the
 * flow stops there, instead of taking the step's cancelled run for a failed attempt.
 */
export class FlowCancelledError extends OpenManusError<'FLOW_CANCELLED'> {
  static readonly codes = ['FLOW_CANCELLED'] as const;
  override readonly name = 'FlowCancelledError';
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super('FLOW_CANCELLED', message, options);
  }
  static override isInstance(value: unknown): value is FlowCancelledError {
    return hasErrorCode(value, FlowCancelledError.codes);
  }
}
