// A cap on the rows a chart's Vega dataflow makes. A spec can make far more rows than its CSV
// holds — a sequence generator, a fold or flatten, facets and layers over them — and a million
// rows took Vega almost a minute and most of a gigabyte to draw; past the cap the drawing stops
// with an error that says so. For the chart worker's thread: it changes Vega for the thread.
import { ingest, Transform, transforms, tupleid } from 'vega';
import { ChartError } from './chartError.js';

type Run = (this: unknown, pulse: unknown) => unknown;
type SequenceParams = { readonly start: number; readonly stop: number; readonly step?: number };
type Generate = (this: unknown, params: SequenceParams, pulse: unknown) => unknown;

const tooMany = (max: number) =>
  new ChartError(
    `The chart makes more than ${max} rows (its CSV's and those the spec generates: sequences, folds, flattens, facets, layers); draw fewer, e.g. aggregate them.`,
  );

let cap: { max: number; start: number } | undefined;

/**
 * Makes every Vega dataflow in this thread stop once more than `max` rows have been made from
 * now on: for the chart drawn next.
 */
export function capRows(max: number): void {
  // Vega numbers each row it makes; a row made now tells how many were made before it.
  const made = () => tupleid(ingest({}));
  if (!cap) patchVega(made);
  cap = { max, start: made() };
}

function patchVega(made: () => number): void {
  const transform = Transform.prototype as unknown as { run: Run };
  const run = transform.run;
  transform.run = function (this: unknown, pulse: unknown) {
    const out = run.call(this, pulse);
    if (cap && made() - cap.start > cap.max) throw tooMany(cap.max);
    return out;
  };
  // A sequence is refused before it is made: a long one alone would fill the memory.
  const sequence = (transforms as unknown as Record<string, { prototype: { transform: Generate } }>).sequence;
  if (!sequence) return;
  const generate = sequence.prototype.transform;
  sequence.prototype.transform = function (this: unknown, params: SequenceParams, pulse: unknown) {
    if (cap && Math.ceil((params.stop - params.start) / (params.step || 1)) > cap.max) throw tooMany(cap.max);
    return generate.call(this, params, pulse);
  };
}
