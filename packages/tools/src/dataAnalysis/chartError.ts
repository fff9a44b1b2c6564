/** A chart that cannot be made, and why, in words for the model. */
export class ChartError extends Error {
  override readonly name = 'ChartError';
}
