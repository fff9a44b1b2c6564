// One chart drawn from its CSV text: the rows parsed, the Vega-Lite spec made and compiled, the
// SVG drawn, the figures computed. The spec is the model's, so this happens in a worker thread
// of its own (chartWorker.ts), within a time, memory and row limit: whatever the spec makes Vega
// do ends there, as an error for the model. Vega loads in that thread, never in this one.
import { runWorkerJob } from '../web/workerJob.js';
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

export interface ChartLimits {
  readonly timeoutMs: number;
  readonly maxMemoryMb: number;
  readonly signal?: AbortSignal;
}

/** The chart, drawn in a worker thread within the limits; rejects with what stopped it. */
export const drawChartOffThread = (job: ChartJob, limits: ChartLimits): Promise<DrawnChart> =>
  runWorkerJob(new URL('./chartWorker.js', import.meta.url), job, { task: 'drawing the chart', ...limits });
