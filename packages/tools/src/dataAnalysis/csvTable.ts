import { inferTypes, read } from 'vega';
import { ChartError } from './chartError.js';

export type ColumnType = 'number' | 'date' | 'boolean' | 'string';
export type Cell = string | number | boolean | null;

/** A CSV file's rows with typed cells: numbers and booleans parsed, dates kept as written. */
export interface Table {
  readonly columns: readonly string[];
  readonly types: Readonly<Record<string, ColumnType>>;
  readonly rows: readonly Readonly<Record<string, Cell>>[];
}

const KINDS: Record<string, ColumnType> = { integer: 'number', number: 'number', date: 'date', boolean: 'boolean' };

/** Parses CSV text (with a header row); `path` names it in errors. */
export function parseCsv(text: string, path: string): Table {
  const raw = read(text.replace(/^\uFEFF/, ''), { type: 'csv' }) as Record<string, string>[];
  const first = raw[0];
  if (!first) throw new ChartError(`${path} has no data rows (a header row, then one row per record).`);
  const columns = Object.keys(first);
  const inferred = inferTypes(raw, columns) as Record<string, string>;
  const types = Object.fromEntries(columns.map((c) => [c, KINDS[inferred[c] ?? ''] ?? 'string'])) as Record<
    string,
    ColumnType
  >;
  const cell = (value: string | undefined, type: ColumnType): Cell => {
    if (value === undefined || value === '') return null;
    if (type === 'number') return Number(value);
    if (type === 'boolean') return value === 'true';
    return value;
  };
  const rows = raw.map((row) => Object.fromEntries(columns.map((c) => [c, cell(row[c], types[c] ?? 'string')])));
  return { columns, types, rows };
}
