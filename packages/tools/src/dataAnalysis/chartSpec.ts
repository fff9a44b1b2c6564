// From a chart request and its table to a Vega-Lite spec: the model's own spec with the CSV's
// rows as its data, or one built from a chart type and column names.
import { ChartError } from './chartError.js';
import type { ChartRequest, ChartType } from './chartPlan.js';
import type { ColumnType, Table } from './csvTable.js';

export type VegaLiteSpec = Readonly<Record<string, unknown>>;

const SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';

const ENCODING: Record<ColumnType, string> = {
  number: 'quantitative',
  date: 'temporal',
  boolean: 'nominal',
  string: 'nominal',
};

const MARKS: Record<Exclude<ChartType, 'pie'>, Record<string, unknown>> = {
  bar: { type: 'bar', tooltip: true },
  line: { type: 'line', point: true, tooltip: true },
  area: { type: 'area', tooltip: true },
  point: { type: 'point', filled: true, tooltip: true },
};

/**
 * A column as an encoding channel. Dates are a time axis, except where each value is a category
 * of its own (a bar per month, a slice per year). Dots and brackets in a name are escaped: Vega-Lite
 * would read them as nested fields.
 */
const channel = (table: Table, name: string, datesAsCategories = false) => {
  const type = table.types[name] ?? 'string';
  return {
    field: name.replace(/[.[\]\\]/g, (c) => `\\${c}`),
    type: type === 'date' && datesAsCategories ? 'ordinal' : ENCODING[type],
    title: name,
  };
};

const listed = (names: readonly string[]) => names.map((n) => JSON.stringify(n)).join(', ');

/** The Vega-Lite spec for one chart; the data is always the table's rows. */
export function chartSpec(request: ChartRequest, table: Table): VegaLiteSpec {
  const data = { values: table.rows };
  if (request.spec) {
    // Ours, never the model's: the data; which language the spec is in (the page reads `$schema`
    // to choose); and the page's embedding options, which vega-embed takes from `usermeta`.
    const { data: _data, $schema: _schema, usermeta: _usermeta, ...spec } = request.spec;
    return { title: request.chartTitle, ...spec, $schema: SCHEMA, data };
  }
  const named = [request.x, request.y, request.color].filter((n): n is string => n !== undefined);
  const unknown = named.filter((n) => !table.columns.includes(n));
  if (unknown.length > 0) {
    throw new ChartError(
      `${request.csvFilePath} has no column ${listed(unknown)}; its columns are ${listed(table.columns)}.`,
    );
  }
  const x = request.x ?? table.columns.find((c) => table.types[c] !== 'number' && c !== request.y) ?? table.columns[0];
  const y = request.y ?? table.columns.find((c) => table.types[c] === 'number' && c !== x);
  if (x === undefined || y === undefined) {
    throw new ChartError(`${request.csvFilePath} has no numeric column to draw against ${x}; name one as y.`);
  }
  const type = request.chartType ?? (table.types[x] === 'date' ? 'line' : 'bar');
  const frame = { $schema: SCHEMA, title: request.chartTitle, data };
  if (type === 'pie') {
    if (table.types[y] !== 'number') throw new ChartError(`A pie's slice sizes (y) must be numeric; ${y} is not.`);
    return {
      ...frame,
      width: 360,
      height: 360,
      mark: { type: 'arc', tooltip: true },
      encoding: { theta: { ...channel(table, y), aggregate: 'sum' }, color: channel(table, x, true) },
    };
  }
  // Several rows per x value drawn as one series would zigzag: split them by a text column.
  const repeats = new Set(table.rows.map((row) => row[x])).size < table.rows.length;
  const color =
    request.color ??
    (repeats ? table.columns.find((c) => c !== x && c !== y && table.types[c] === 'string') : undefined);
  return {
    ...frame,
    width: 600,
    height: 320,
    mark: MARKS[type],
    encoding: {
      x: channel(table, x, type === 'bar'),
      y: channel(table, y),
      ...(color ? { color: channel(table, color, true) } : {}),
    },
  };
}

/** The URLs a compiled Vega spec would load data from, anywhere in it: charts draw only the CSV's rows. */
export function dataUrls(spec: unknown): string[] {
  const found: string[] = [];
  const walk = (node: unknown) => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === 'data' && Array.isArray(value)) {
        for (const source of value) {
          if (typeof source === 'object' && source !== null && 'url' in source) found.push(JSON.stringify(source.url));
        }
      }
      walk(value);
    }
  };
  walk(spec);
  return found;
}
