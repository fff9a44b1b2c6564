// The insights file written beside a chart: what the model found, then figures computed from
// the data itself, so the file says something true even when the model said nothing.
import type { ChartRequest } from './chartPlan.js';
import type { Table } from './csvTable.js';

export const CHART_LANGUAGES = ['en', 'zh'] as const;
export type ChartLanguage = (typeof CHART_LANGUAGES)[number];

const WORDS: Record<ChartLanguage, Record<string, string>> = {
  en: {
    chart: 'Chart',
    data: 'Data',
    rows: 'rows',
    columns: 'columns',
    insights: 'Insights',
    figures: 'Figures',
    total: 'total',
    mean: 'mean',
    highest: 'highest',
    lowest: 'lowest',
  },
  zh: {
    chart: '图表',
    data: '数据',
    rows: '行',
    columns: '列',
    insights: '洞察',
    figures: '数据概要',
    total: '合计',
    mean: '平均',
    highest: '最高',
    lowest: '最低',
  },
};

/** Most numeric columns summed up, so a wide table does not bury the chart's own. */
const MAX_SUMMARIES = 5;

/** One line per numeric column: total, mean, and where it is highest and lowest. */
export function columnFigures(request: ChartRequest, table: Table, language: ChartLanguage): string[] {
  const w = WORDS[language];
  const format = new Intl.NumberFormat(language === 'zh' ? 'zh-CN' : 'en-US', { maximumFractionDigits: 2 });
  const label = [request.x, ...table.columns].find((c) => c !== undefined && table.types[c] !== 'number');
  const numeric = table.columns.filter((c) => table.types[c] === 'number');
  const first = [request.y, request.x].filter((c): c is string => c !== undefined && numeric.includes(c));
  const ordered = [...new Set([...first, ...numeric])].slice(0, MAX_SUMMARIES);
  return ordered.flatMap((column) => {
    const rows = table.rows.filter((row) => typeof row[column] === 'number');
    if (rows.length === 0) return [];
    const value = (row: (typeof rows)[number]) => row[column] as number;
    const total = rows.reduce((sum, row) => sum + value(row), 0);
    const high = rows.reduce((a, b) => (value(b) > value(a) ? b : a));
    const low = rows.reduce((a, b) => (value(b) < value(a) ? b : a));
    const at = (row: (typeof rows)[number]) => (label ? ` (${label} ${String(row[label])})` : '');
    return [
      `${column}: ${w.total} ${format.format(total)}, ${w.mean} ${format.format(total / rows.length)}; ` +
        `${w.highest} ${format.format(value(high))}${at(high)}, ${w.lowest} ${format.format(value(low))}${at(low)}.`,
    ];
  });
}

export interface InsightsFile {
  readonly title: string;
  /** The chart file's name (it sits beside this file). */
  readonly chartFile: string;
  readonly csvPath: string;
  /** The CSV's size: its rows and its columns' names. */
  readonly rows: number;
  readonly columns: readonly string[];
  readonly insights: readonly string[];
  readonly figures: readonly string[];
  readonly language: ChartLanguage;
}

/** The Markdown of the insights file. */
export function insightsMarkdown(file: InsightsFile): string {
  const w = WORDS[file.language];
  const lines = [
    `# ${file.title}`,
    '',
    `- ${w.chart}: [${file.chartFile}](${encodeURI(file.chartFile)})`,
    `- ${w.data}: ${file.csvPath} (${file.rows} ${w.rows}; ${w.columns}: ${file.columns.join(', ')})`,
    '',
  ];
  if (file.insights.length > 0) lines.push(`## ${w.insights}`, '', ...file.insights.map((i) => `- ${i}`), '');
  if (file.figures.length > 0) lines.push(`## ${w.figures}`, '', ...file.figures.map((f) => `- ${f}`), '');
  return lines.join('\n');
}
