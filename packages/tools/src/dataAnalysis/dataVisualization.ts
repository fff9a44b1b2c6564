// data_visualization: the charts a JSON file lists (OpenManus's `[{ csvFilePath, chartTitle }]`)
// made into files under <workspace>/visualization/ — the chart (an HTML page that works offline,
// or an SVG drawn on the server), its insights in Markdown and its Vega-Lite spec — never
// replacing a file that is there. In a run with a sandbox, the files are the sandbox's.
import { basename, extname, join } from 'node:path';
import { defineTool, err, messageOf, ok, type SandboxProvider, sandboxFor } from '@openmanus/core';
import { z } from 'zod';
import { ChartError } from './chartError.js';
import { type ChartFiles, hostChartFiles, sandboxChartFiles } from './chartFiles.js';
import { chartHtml } from './chartHtml.js';
import { type ChartDrawing, chartDrawing } from './chartJob.js';
import { type ChartRequest, chartPlan } from './chartPlan.js';
import { CHART_LANGUAGES, type ChartLanguage, insightsMarkdown } from './insights.js';

export interface DataVisualizationOptions {
  /** Where the CSV and JSON files are read (nothing outside it is) and `visualization/` is written. */
  readonly workspace: string;
  /** Largest CSV file drawn, in bytes (default 5 000 000). */
  readonly maxCsvBytes?: number;
  /**
   * Rows a chart's data may reach: the CSV's, and those its spec makes (sequences, folds,
   * flattens, facets, layers) (default 250 000). A chart is drawn in a worker thread, and one
   * that reaches this is stopped with an error.
   */
  readonly maxRows?: number;
  /** Seconds one chart's drawing may take; then it is stopped with an error (default 60). */
  readonly timeoutSec?: number;
  /**
   * Where the files are when the run has no sandbox of its own (a run given one uses it): this
   * provider's sandbox for the run, shared with the other tools given it (Python writes the CSVs
   * there), `workspace` then being unused. The charts are still drawn in this process; only the
   * files are the sandbox's.
   */
  readonly sandboxProvider?: SandboxProvider;
}

export const CHART_OUTPUTS = ['html', 'svg'] as const;
export type ChartOutput = (typeof CHART_OUTPUTS)[number];

/** Where charts go, inside the workspace (as in OpenManus). */
export const CHART_DIR = 'visualization';

const MAX_PLAN_BYTES = 1_000_000;
/** Heap one chart's drawing may use. */
const MAX_MEMORY_MB = 1024;
/** Names tried for one chart before giving up (`sales`, `sales_1`, … ). */
const MAX_SUFFIX = 1000;

const parameters = z.object({
  json_path: z
    .string()
    .min(1)
    .describe(
      'The JSON file listing the charts, as visualization_preparation writes it: ' +
        '[{"csvFilePath": "...", "chartTitle": "..."}, ...] (absolute, or relative to the workspace).',
    ),
  output_type: z
    .enum(CHART_OUTPUTS)
    .default('html')
    .describe('html: an interactive page that opens offline (default); svg: a static image.'),
  language: z.enum(CHART_LANGUAGES).default('en').describe('Language of the insights file: en (default) or zh.'),
});

/** The charts the JSON file lists, or why it cannot be read as such a list. */
async function readPlan(files: ChartFiles, path: string): Promise<ChartRequest[]> {
  const text = await files.read(path, MAX_PLAN_BYTES);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ChartError(`${path} is not valid JSON: ${messageOf(error)}`);
  }
  // One chart written as an object rather than a list of one is read as meant.
  const parsed = chartPlan.safeParse(Array.isArray(json) ? json : [json]);
  if (!parsed.success) {
    throw new ChartError(
      `${path} does not list charts as data_visualization reads them:\n${z.prettifyError(parsed.error)}`,
    );
  }
  return parsed.data;
}

/** A file name from the CSV's: letters, digits, `_` and `-` only. */
const stemOf = (csvPath: string) =>
  basename(csvPath, extname(csvPath))
    .replace(/[^\p{L}\p{N}_-]+/gu, '_')
    .slice(0, 80) || 'chart';

export function createDataVisualization(options: DataVisualizationOptions) {
  const maxCsvBytes = options.maxCsvBytes ?? 5_000_000;
  const maxRows = options.maxRows ?? 250_000;
  const timeoutMs = (options.timeoutSec ?? 60) * 1000;

  /** The first of `name`, `name_1`, `name_2`, … under which none of the chart's files exists yet. */
  const freeStem = async (files: ChartFiles, name: string, extensions: readonly string[]) => {
    for (let n = 0; n < MAX_SUFFIX; n++) {
      const stem = n === 0 ? name : `${name}_${n}`;
      const used = await Promise.all(extensions.map((ext) => files.taken(join(CHART_DIR, `${stem}${ext}`))));
      if (!used.includes(true)) return stem;
    }
    throw new ChartError(`${CHART_DIR}/ already holds ${MAX_SUFFIX} charts named ${name}; remove some first.`);
  };

  const makeChart = async (
    files: ChartFiles,
    drawing: ChartDrawing,
    request: ChartRequest,
    output: ChartOutput,
    language: ChartLanguage,
    signal: AbortSignal,
  ) => {
    const csv = await files.read(request.csvFilePath, maxCsvBytes);
    const { spec, svg, warnings, figures, rows, columns } = await drawing.draw(
      { csv, request, language, maxRows },
      { timeoutMs, signal },
    );
    const chart = output === 'svg' ? svg : await chartHtml(spec, request.chartTitle, language);
    const extensions = [`.${output}`, '.md', '.vl.json'] as const;
    const stem = await freeStem(files, stemOf(request.csvFilePath), extensions);
    const markdown = insightsMarkdown({
      title: request.chartTitle,
      chartFile: `${stem}.${output}`,
      csvPath: request.csvFilePath,
      rows,
      columns,
      insights: request.insights ?? [],
      figures,
      language,
    });
    const [chartPath, insightsPath, specPath] = await Promise.all(
      [chart, markdown, `${JSON.stringify(spec, null, 2)}\n`].map((content, i) =>
        files.create(join(CHART_DIR, `${stem}${extensions[i]}`), content),
      ),
    );
    return [
      `## ${request.chartTitle}`,
      `Chart: ${chartPath}`,
      `Insights: ${insightsPath}`,
      `Vega-Lite spec: ${specPath}`,
      ...figures,
      ...(warnings.length > 0 ? [`Vega-Lite warned: ${warnings.join('; ')}`] : []),
    ].join('\n');
  };

  return defineTool({
    name: 'data_visualization',
    description:
      'Draws the charts listed in the JSON file visualization_preparation wrote ' +
      '([{"csvFilePath", "chartTitle", and optionally "chartType" (bar|line|area|point|pie), "x", "y", "color", ' +
      'or "spec" (a Vega-Lite spec), and "insights" (findings to record)}]). ' +
      `Writes each chart to ${CHART_DIR}/ in the workspace as an interactive HTML page (works offline) or an SVG image, ` +
      'with a Markdown file of insights and the Vega-Lite spec beside it; existing files are never replaced.',
    parameters,
    execute: async ({ json_path, output_type, language }, scope) => {
      const sandbox = sandboxFor(scope, options.sandboxProvider);
      const files = sandbox ? sandboxChartFiles(await sandbox()) : hostChartFiles(options.workspace);
      let requests: ChartRequest[];
      try {
        requests = await readPlan(files, json_path);
      } catch (error) {
        return err(messageOf(error));
      }
      const made: string[] = [];
      const failed: string[] = [];
      const drawing = chartDrawing(MAX_MEMORY_MB);
      try {
        for (const [index, request] of requests.entries()) {
          try {
            made.push(await makeChart(files, drawing, request, output_type, language, scope.signal));
          } catch (error) {
            failed.push(`- chart ${index + 1} (${request.chartTitle}): ${messageOf(error)}`);
          }
        }
      } finally {
        drawing.close();
      }
      const charts = (n: number) => `${n} chart${n === 1 ? '' : 's'}`;
      if (failed.length === 0) return ok(`Made ${charts(made.length)}.\n\n${made.join('\n\n')}`);
      const summary = `${failed.length} of ${charts(requests.length)} could not be made:\n${failed.join('\n')}`;
      return err(made.length > 0 ? `${summary}\n\nMade ${charts(made.length)}:\n\n${made.join('\n\n')}` : summary);
    },
  });
}
