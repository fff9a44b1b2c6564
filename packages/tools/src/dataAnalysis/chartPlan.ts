// The JSON file visualization_preparation writes and data_visualization reads: one entry per
// chart. OpenManus's shape is `[{ csvFilePath, chartTitle }]`; the rest says how to draw it.
import { z } from 'zod';

export const CHART_TYPES = ['bar', 'line', 'area', 'point', 'pie'] as const;
export type ChartType = (typeof CHART_TYPES)[number];

export const chartRequest = z
  .object({
    csvFilePath: z.string().min(1).describe('The CSV file to draw: absolute, or relative to the workspace.'),
    chartTitle: z.string().min(1).describe("The chart's title."),
    chartType: z.enum(CHART_TYPES).optional(),
    x: z.string().min(1).optional().describe('Column along the x axis (for pie: the slices).'),
    y: z.string().min(1).optional().describe('Numeric column along the y axis (for pie: the slice sizes).'),
    color: z
      .string()
      .min(1)
      .optional()
      .describe('Column that splits the data into coloured series (default: a text column, when x values repeat).'),
    spec: z
      .record(z.string(), z.unknown())
      .optional()
      .describe("A Vega-Lite spec instead of chartType/x/y/color; its data is replaced by the CSV's rows."),
    insights: z.array(z.string()).optional().describe('Findings to write into the insights file.'),
  })
  .refine((chart) => !(chart.spec && (chart.chartType || chart.x || chart.y || chart.color)), {
    message: 'Give either spec, or chartType/x/y/color, not both.',
  });

export type ChartRequest = z.infer<typeof chartRequest>;

export const chartPlan = z.array(chartRequest).min(1, 'The list names no chart.').max(20);
