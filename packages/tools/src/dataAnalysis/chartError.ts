import { hasErrorCode, OpenManusError } from '@openmanus/core';

/** A chart that cannot be made, and why, in words for the model. */
export class ChartError extends OpenManusError<'CHART_FAILED'> {
  static readonly codes = ['CHART_FAILED'] as const;
  override readonly name = 'ChartError';
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super('CHART_FAILED', message, options);
  }
  static override isInstance(value: unknown): value is ChartError {
    return hasErrorCode(value, ChartError.codes);
  }
}
