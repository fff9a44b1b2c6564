// Chart specs are the model's: none may take the process down, stall its event loop, or make
// rows without end.
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { toolSession } from '@openmanus/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDataVisualization, type DataVisualizationOptions } from '../src/dataAnalysis/dataVisualization.js';
import { salesWorkspace, writePlan } from './chartFiles.js';
import { whileTicking } from './ticking.js';

let workspace: string;
beforeEach(async () => {
  workspace = await salesWorkspace();
});
afterEach(() => rm(workspace, { recursive: true, force: true }));

const draw = (spec: unknown, output: 'html' | 'svg', options: Partial<DataVisualizationOptions> = {}) =>
  whileTicking(async () => {
    const json = await writePlan(workspace, [{ csvFilePath: 'data/sales.csv', chartTitle: 'Sales', spec }]);
    return toolSession(createDataVisualization({ workspace, ...options })).call({
      json_path: json,
      output_type: output,
    });
  });
const charts = () => readdir(join(workspace, 'visualization')).catch(() => [] as string[]);

const bars = {
  mark: 'bar',
  encoding: { x: { field: 'month', type: 'ordinal' }, y: { field: 'sales', type: 'quantitative' } },
};

describe('data_visualization with a hostile spec', () => {
  // vitest fails a run in which a rejection reaches this process unhandled: Vega's SVG writer
  // read the refusal of a link in a promise nobody awaited.
  it.each(['html', 'svg'] as const)('draws a chart with an href channel as %s, with no link in it', async (output) => {
    const spec = { ...bars, encoding: { ...bars.encoding, href: { value: 'https://attacker.test/?q=1' } } };
    const { value: result } = await draw(spec, output);
    expect(result.isError).toBe(false);
    expect((await charts()).sort()).toEqual([`sales.${output}`, 'sales.md', 'sales.vl.json'].sort());
    if (output === 'svg') {
      const svg = await readFile(join(workspace, 'visualization', 'sales.svg'), 'utf8');
      expect(svg).toContain('role-mark');
      expect(svg).not.toContain('attacker.test');
    }
  });

  it('stops a nested layer that generates a million rows, with an error that says so', async () => {
    const spec = {
      layer: [
        bars,
        {
          layer: [
            {
              data: { sequence: { start: 0, stop: 1_000_000, as: 'n' } },
              mark: 'point',
              encoding: { x: { field: 'n', type: 'quantitative' } },
            },
          ],
        },
      ],
    };
    const { value: result, ticks } = await draw(spec, 'svg');
    expect(result.isError).toBe(true);
    expect(result.output).toContain(
      "The chart makes more than 250000 rows (its CSV's and those the spec generates: sequences, folds, flattens, facets, layers); draw fewer",
    );
    expect(ticks).toBeGreaterThan(0);
    expect(await charts()).toEqual([]);
  });

  it('stops rows that a flatten makes from each row, past maxRows', async () => {
    const spec = {
      ...bars,
      transform: [{ calculate: 'sequence(0, 1000)', as: 'copies' }, { flatten: ['copies'] }],
    };
    const { value: result } = await draw(spec, 'svg', { maxRows: 2000 });
    expect(result.isError).toBe(true);
    expect(result.output).toContain('The chart makes more than 2000 rows');
    expect(await charts()).toEqual([]);
  });

  it('stops a drawing that never ends at the time limit, and the event loop runs meanwhile', async () => {
    // Backtracking without end: no machine finishes this, so any time limit is reached.
    const spec = {
      ...bars,
      transform: [
        { calculate: "test(regexp('^(a|a)*$'), 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!')", as: 'x' },
      ],
    };
    const { value: result, ticks } = await draw(spec, 'html', { timeoutSec: 2 });
    expect(result.isError).toBe(true);
    expect(result.output).toContain('drawing the chart took longer than 2 s and was stopped');
    expect(ticks).toBeGreaterThan(0);
    expect(await charts()).toEqual([]);
  });
});
