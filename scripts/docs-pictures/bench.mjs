// The bench charts, from the bench's own figures: the tables `pnpm bench` writes between
// `<!-- bench:start -->` / `<!-- bench:end -->` and `<!-- cost:start -->` / `<!-- cost:end -->`
// (bench/index.js's withBlock), read back from the file that holds them.
import { barChart } from './svg.mjs';

/** The text between `<!-- name:start -->` and `<!-- name:end -->`, or undefined. */
export function block(markdown, name) {
  const start = markdown.indexOf(`<!-- ${name}:start -->`);
  const end = markdown.indexOf(`<!-- ${name}:end -->`);
  if (start < 0 || end < start) return undefined;
  return markdown.slice(start + `<!-- ${name}:start -->`.length, end);
}

const cells = (line) =>
  line
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split('|')
    .map((cell) => cell.trim());

/** Every markdown table in `text`, each with the bold line or paragraph just before it (its title). */
export function tables(text) {
  const lines = text.split('\n');
  const found = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].trim().startsWith('|') || !/^\|[\s:|-]+\|$/.test(lines[i + 1]?.trim() ?? '')) continue;
    let title = '';
    for (let j = i - 1; j >= 0 && !title; j--) title = lines[j].trim();
    const header = cells(lines[i]);
    const rows = [];
    let k = i + 2;
    for (; k < lines.length && lines[k].trim().startsWith('|'); k++) rows.push(cells(lines[k]));
    found.push({ title: title.replace(/^\*\*|\*\*$/g, ''), header, rows });
    i = k - 1;
  }
  return found;
}

/** A table cell as a number: `1,885,326`, `95 %`, `$0.704`, `1.40×`; undefined for `—` / `–`. */
export function number(cell) {
  const cleaned = String(cell)
    .replace(/[,$×%\s¹]/g, '')
    .trim();
  if (cleaned === '' || cleaned === '—' || cleaned === '–') return undefined;
  const value = Number(cleaned);
  return Number.isFinite(value) ? value : undefined;
}

/** A contender's heading without its version(s): `@openmanus/core 0.1.0` → `@openmanus/core`. */
export const withoutVersion = (label) =>
  label
    .replace(/\s*¹$/, '')
    .replace(/\s*\([^)]*\d+\.\d+\.\d+[^)]*\)$/, '')
    .replace(/\s+\d+\.\d+\.\d+\S*$/, '')
    .trim();

const isOurs = (label) => label.startsWith('@openmanus/core');

/** The figures of the stored bench and cost blocks of `markdown`. */
export function benchFigures(markdown) {
  const bench = block(markdown, 'bench');
  const cost = block(markdown, 'cost');
  if (!bench || !cost) throw new Error('no <!-- bench:start --> / <!-- cost:start --> blocks in it');
  const meta = bench.trim().split('\n')[0] ?? '';
  const benchDate = meta.match(/^\d{4}-\d{2}-\d{2}/)?.[0];
  const costDate = cost.match(/Cost per task \((\d{4}-\d{2}-\d{2})\)/)?.[1];
  const [figures] = tables(bench);
  if (figures?.header[0] !== 'figure') throw new Error('the bench block has no figures table');
  const contenders = figures.header.slice(1);
  const row = (name) => {
    const found = figures.rows.find((r) => r[0] === name);
    if (!found) throw new Error(`the figures table has no row "${name}"`);
    return contenders.map((label, i) => ({ label, value: number(found[i + 1]) }));
  };
  const research = tables(cost).find((t) => t.title.startsWith('Research loop'));
  if (!research) throw new Error('the cost block has no research-loop table');
  const column = (name) => {
    const index = research.header.indexOf(name);
    if (index < 0) throw new Error(`the research-loop table has no column "${name}"`);
    return index;
  };
  const costRows = research.rows.map((r) => ({
    label: r[0],
    inputTokens: number(r[column('input tokens')]),
    cacheable: number(r[column('cacheable')]),
    cost10: number(r[column('cost, cache at 10 %')]),
    cost50: number(r[column('cost, cache at 50 %')]),
  }));
  return {
    benchDate,
    costDate,
    machine: meta.replace(/^\d{4}-\d{2}-\d{2}\s*·\s*/, '').split(' · medians')[0],
    researchTitle: research.title,
    perStep50: row('ms per step, 50-step loop'),
    perStep400: row('ms per step, 400-step loop'),
    coldImport: row('cold import (ms)'),
    installMb: row('install: MB on disk'),
    cost: costRows,
  };
}

const money = (v) => `$${v.toFixed(v < 1 ? 3 : 2)}`;
const ms = (v) => (v >= 100 ? v.toFixed(0) : v.toFixed(v >= 10 ? 1 : 2));

/** The charts (file name → SVG) from `benchFigures`' output; `sourceName` is the file they were read from. */
export function benchCharts(figures, sourceName) {
  const costSource = [
    `Source: pnpm bench (bench/cost.mjs), ${figures.costDate ?? 'undated'}, as stored in ${sourceName}. Every contender runs the same scripted model`,
    'on a local OpenAI-compatible server; tokens counted with o200k_base from the request bodies it received; $2.50 / $10.00 per million input / output tokens.',
  ];
  const stepSource = [
    `Source: pnpm bench (bench/index.js), ${figures.benchDate ?? 'undated'}, as stored in ${sourceName}: ${figures.machine}.`,
    'The same agent task against a local model server, each contender in processes of its own; medians over 5 processes.',
  ];
  const costRows = figures.cost.map((r) => ({ label: withoutVersion(r.label), highlight: isOurs(r.label), r }));
  const merge = (a, b) =>
    a.map(({ label, value }, i) => ({
      label: withoutVersion(label),
      highlight: isOurs(label),
      values: [value, b[i]?.value],
    }));
  // The variants of our own column (JSON Schema tool, the AI SDK port) stay in the tables; the charts
  // compare the defaults: the raw SDK loop, ours, the peers.
  const mainContenders = (rows) =>
    rows
      .filter((r) => r.label === '@openmanus/core' || !isOurs(r.label))
      .filter((r) => r.label !== 'raw openai loop + zod');
  return {
    'bench-cost.svg': barChart({
      title: 'Cost of one 150-step research task',
      subtitle:
        'Lower is better. The same task and scripted replies for every contender; cached input billed at 10 % or 50 % of the input price.',
      unit: 'US dollars per task',
      series: [{ name: 'cached input at 10 %' }, { name: 'cached input at 50 %' }],
      rows: costRows.map(({ label, highlight, r }) => ({ label, highlight, values: [r.cost10, r.cost50] })),
      format: money,
      tick: (v) => `$${v % 1 === 0 ? v : v.toFixed(2)}`,
      source: costSource,
    }),
    'bench-input-tokens.svg': barChart({
      title: 'Input tokens sent over a 150-step research task',
      subtitle: 'Lower is better. The share a provider’s prefix cache could serve is given after each bar.',
      unit: 'input tokens per task (millions)',
      series: [{ name: 'input tokens' }],
      rows: costRows.map(({ label, highlight, r }) => ({
        label,
        highlight,
        values: [r.inputTokens / 1e6],
        cacheable: r.cacheable,
      })),
      format: (v) => `${v.toFixed(2)} M`,
      tick: (v) => `${v} M`,
      valueNote: (row) => (row.cacheable === undefined ? '' : ` · ${row.cacheable} % cacheable`),
      source: costSource,
    }),
    'bench-step.svg': barChart({
      title: 'Time per agent step, beside the raw openai SDK loop',
      subtitle:
        'Lower is better. An instant local model, one tool call per step: what the library itself adds per step.',
      unit: 'milliseconds per step',
      series: [{ name: '50-step loop' }, { name: '400-step loop' }],
      rows: mainContenders(merge(figures.perStep50, figures.perStep400)),
      format: ms,
      source: stepSource,
    }),
    'bench-import.svg': barChart({
      title: 'Cold import time',
      subtitle: 'Lower is better. A fresh Node process importing the package(s) a user adds for each contender.',
      unit: 'milliseconds',
      series: [{ name: 'cold import' }],
      rows: mainContenders(merge(figures.coldImport, [])).map((r) => ({ ...r, values: [r.values[0]] })),
      format: (v) => v.toFixed(0),
      source: stepSource[0],
    }),
  };
}
