// The worker thread that draws one chart (see chartJob.ts).
import { answerJobs } from '../web/workerJob.js';
import type { ChartJob, DrawnChart } from './chartJob.js';
import { chartSpec } from './chartSpec.js';
import { parseCsv } from './csvTable.js';
import { columnFigures } from './insights.js';
import { capRows } from './rowCap.js';
import { compileChart, renderSvg } from './vegaRender.js';

async function drawChart(job: ChartJob): Promise<DrawnChart> {
  capRows(job.maxRows);
  const table = parseCsv(job.csv, job.request.csvFilePath);
  const spec = chartSpec(job.request, table);
  const compiled = compileChart(spec);
  // Drawn in every case: a chart that cannot be drawn is found here, not by the person opening it.
  const svg = await renderSvg(compiled.vega);
  return {
    spec,
    svg,
    warnings: compiled.warnings,
    figures: columnFigures(job.request, table, job.language),
    rows: table.rows.length,
    columns: table.columns,
  };
}

answerJobs(drawChart);
