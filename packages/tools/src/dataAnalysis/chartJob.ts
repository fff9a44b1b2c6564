// One chart drawn from its CSV text: the rows parsed, the Vega-Lite spec made and compiled, the
// SVG drawn, the figures computed. The spec is the model's, so this happens in a worker thread
// (chartWorker.ts), within a time, memory and row limit: whatever the spec makes Vega
// do ends there, as an error for the model. Vega loads in that thread, never in this one.
import { workerJobs } from '../web/workerJob.js';
import type { ChartRequest } from './chartPlan.js';
import type { VegaLiteSpec } from './chartSpec.js';
import type { ChartLanguage } from './insights.js';

export interface ChartJob {
  readonly csv: string;
  readonly request: ChartRequest;
  readonly language: ChartLanguage;
  /** Rows the chart's data may reach, the CSV's and those the spec makes. */
  readonly maxRows: number;
}

export interface DrawnChart {
  readonly spec: VegaLiteSpec;
  readonly svg: string;
  /** What Vega-Lite warned about. */
  readonly warnings: readonly string[];
  readonly figures: readonly string[];
  /** The CSV's rows and columns. */
  readonly rows: number;
  readonly columns: readonly string[];
}

export interface ChartDrawing {
  /** The chart, drawn in the worker within the limits; rejects with what stopped it. */
  draw(job: ChartJob, limits: { readonly timeoutMs: number; readonly signal: AbortSignal }): Promise<DrawnChart>;
  close(): void;
}

/**
 * The charts of one call, drawn one after another in a worker thread (Vega loads once for them):
 * a chart stopped by a limit ends the worker, and the next chart gets a new one.
 */
export function chartDrawing(maxMemoryMb: number): ChartDrawing {
  const jobs = workerJobs<ChartJob, DrawnChart>(new URL('./chartWorker.js', import.meta.url), {
    task: 'drawing the chart',
    maxMemoryMb,
  });
  return { draw: (job, limits) => jobs.run(job, limits), close: () => jobs.close() };
}
