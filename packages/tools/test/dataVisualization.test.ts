import { readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toolSession } from '@openmanus/core/testing';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDataVisualization } from '../src/dataAnalysis/dataVisualization.js';
import { compileChart, renderSvg } from '../src/dataAnalysis/vegaRender.js';
import { salesWorkspace, writePlan } from './chartFiles.js';
import { launchChromium } from './chromium.js';
import { tempWorkspace } from './helpers.js';
import { startWebServer } from './webServer.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

let workspace: string;
let draw: (args: unknown) => Promise<{ output: string; isError: boolean }>;
beforeEach(async () => {
  workspace = await salesWorkspace();
  const session = toolSession(createDataVisualization({ workspace }));
  draw = (args) => session.call(args);
});
afterEach(() => rm(workspace, { recursive: true, force: true }));

const sales = { csvFilePath: 'data/sales.csv', chartTitle: 'Sales by month' };
const charts = () => readdir(join(workspace, 'visualization')).catch(() => [] as string[]);

/** The bundled CSV's rows, read here independently of the tool. */
async function salesRows() {
  const [, ...lines] = (await readFile(join(workspace, 'data', 'sales.csv'), 'utf8')).trim().split('\n');
  return lines.map((line) => {
    const [month = '', region = '', amount = '0'] = line.split(',');
    return { month, region, sales: Number(amount) };
  });
}

/** Opens a page the way a person would (file://) and waits for vega-embed's drawing. */
async function openChart(path: string) {
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  await page.goto(`file://${path}`);
  // Only a chart that is never drawn reaches this: the test's own time-out comes first.
  await page.waitForSelector('#chart svg .role-title-text', { timeout: 600_000 });
  return { page, problems };
}

describe('data_visualization', () => {
  it('has json_path as its one required parameter (OpenManus required a non-existent "code")', () => {
    const tool = createDataVisualization({ workspace: tmpdir() });
    expect(tool.spec.name).toBe('data_visualization');
    expect(tool.spec.parameters).toMatchObject({
      required: ['json_path'],
      properties: {
        json_path: { type: 'string' },
        output_type: { enum: ['html', 'svg'], default: 'html' },
        language: { enum: ['en', 'zh'], default: 'en' },
      },
    });
  });

  it('draws a chart as an offline HTML page that Chromium renders, with insights and spec beside it', async () => {
    const json = await writePlan(workspace, [
      { ...sales, chartType: 'bar', x: 'month', y: 'sales', color: 'region', insights: ['North leads every month.'] },
    ]);
    const result = await draw({ json_path: json });
    const dir = join(workspace, 'visualization');
    expect(result.isError).toBe(false);
    expect(result.output).toContain(`Chart: ${dir}/sales.html`);
    expect(result.output).toContain(`Insights: ${dir}/sales.md`);
    expect(result.output).toContain(`Vega-Lite spec: ${dir}/sales.vl.json`);
    expect((await charts()).sort()).toEqual(['sales.html', 'sales.md', 'sales.vl.json']);

    const html = await readFile(join(dir, 'sales.html'), 'utf8');
    expect(html).not.toMatch(/<script[^>]+src=/);
    expect(html).not.toMatch(/<link[^>]+href=/);
    const rows = await salesRows();
    const { page, problems } = await openChart(join(dir, 'sales.html'));
    expect(await page.locator('#chart svg .role-title-text').textContent()).toBe('Sales by month');
    expect(await page.locator('#chart svg .mark-rect path').count()).toBe(rows.length);
    expect(await page.locator('#chart svg .role-legend-label text').allTextContents()).toEqual(['North', 'South']);
    expect(problems).toEqual([]);
    await page.close();

    const total = rows.reduce((sum, row) => sum + row.sales, 0);
    const top = rows.reduce((a, b) => (b.sales > a.sales ? b : a));
    const insights = await readFile(join(dir, 'sales.md'), 'utf8');
    expect(insights).toContain('# Sales by month');
    expect(insights).toContain('- Chart: [sales.html](sales.html)');
    expect(insights).toContain('- North leads every month.');
    expect(insights).toContain(`sales: total ${total.toLocaleString('en-US')}`);
    expect(insights).toContain(`highest ${top.sales.toLocaleString('en-US')} (month ${top.month})`);
    const spec = JSON.parse(await readFile(join(dir, 'sales.vl.json'), 'utf8'));
    expect(spec).toMatchObject({ mark: { type: 'bar' }, encoding: { x: { field: 'month' }, y: { field: 'sales' } } });
    expect(spec.data.values).toHaveLength(rows.length);
  });

  it('draws an SVG on the server: a valid SVG document with the title and one bar per row', async () => {
    const json = await writePlan(workspace, [
      { ...sales, chartTitle: 'Sales & units <2024>', chartType: 'bar', x: 'month', y: 'sales' },
    ]);
    const result = await draw({ json_path: json, output_type: 'svg' });
    expect(result.isError).toBe(false);
    expect((await charts()).sort()).toEqual(['sales.md', 'sales.svg', 'sales.vl.json']);
    const svg = await readFile(join(workspace, 'visualization', 'sales.svg'), 'utf8');
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*>[\s\S]*<\/svg>$/);
    // Opened as a document of its own: Chromium's XML parser shows a parsererror for a malformed one.
    const page = await browser.newPage();
    await page.goto(`file://${join(workspace, 'visualization', 'sales.svg')}`);
    expect(await page.evaluate('document.documentElement.namespaceURI')).toBe('http://www.w3.org/2000/svg');
    expect(await page.locator('parsererror').count()).toBe(0);
    expect(await page.locator('.role-title-text').textContent()).toBe('Sales & units <2024>');
    expect(await page.locator('.mark-rect path').count()).toBe((await salesRows()).length);
    await page.close();
  });

  it('chooses sensible columns when the request names none, and writes the insights in Chinese on request', async () => {
    const json = await writePlan(workspace, [sales]);
    const result = await draw({ json_path: json, language: 'zh' });
    expect(result.isError).toBe(false);
    const spec = JSON.parse(await readFile(join(workspace, 'visualization', 'sales.vl.json'), 'utf8'));
    // The first column is a date: a line over time, against the first numeric column, one per region.
    expect(spec.mark.type).toBe('line');
    expect(spec.encoding).toMatchObject({
      x: { field: 'month', type: 'temporal' },
      y: { field: 'sales', type: 'quantitative' },
      color: { field: 'region', type: 'nominal' },
    });
    const insights = await readFile(join(workspace, 'visualization', 'sales.md'), 'utf8');
    expect(insights).toContain('## 数据概要');
    expect(insights).toContain('sales: 合计');
  });

  it('draws a pie: one slice per category, sized by its total', async () => {
    const json = await writePlan(workspace, [
      { ...sales, chartTitle: 'Share by region', chartType: 'pie', x: 'region', y: 'sales' },
    ]);
    expect((await draw({ json_path: json, output_type: 'svg' })).isError).toBe(false);
    const svg = await readFile(join(workspace, 'visualization', 'sales.svg'), 'utf8');
    const slices = [
      ...svg.matchAll(/<path aria-label="([^"]*)" role="graphics-symbol" aria-roledescription="arc mark"/g),
    ].map((m) => m[1]);
    const totals = new Map<string, number>();
    for (const row of await salesRows()) totals.set(row.region, (totals.get(row.region) ?? 0) + row.sales);
    expect(slices).toEqual([...totals].map(([region, total]) => `sales: ${total}; region: ${region}`));
  });

  it("draws the model's own Vega-Lite spec with the CSV's rows as its data", async () => {
    const spec = {
      mark: 'point',
      data: { values: [{ month: 'x', sales: 1 }] },
      transform: [{ calculate: 'datum.sales / 1000', as: 'thousands' }],
      encoding: {
        x: { field: 'units', type: 'quantitative' },
        y: { field: 'thousands', type: 'quantitative' },
        color: { field: 'region', type: 'nominal' },
      },
    };
    const json = await writePlan(workspace, [{ ...sales, chartTitle: 'Units against sales', spec }]);
    const result = await draw({ json_path: json });
    expect(result.isError).toBe(false);
    const { page, problems } = await openChart(join(workspace, 'visualization', 'sales.html'));
    expect(await page.locator('#chart svg .role-title-text').textContent()).toBe('Units against sales');
    expect(await page.locator('#chart svg .mark-symbol.role-mark path').count()).toBe((await salesRows()).length);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("keeps the page's embedding options and the spec's language its own", async () => {
    const spec = {
      $schema: 'https://vega.github.io/schema/vega/v6.json',
      usermeta: { embedOptions: { actions: { editor: true }, editorUrl: 'https://attacker.test/editor' } },
      mark: 'bar',
      encoding: { x: { field: 'month' }, y: { field: 'sales', type: 'quantitative' } },
    };
    expect((await draw({ json_path: await writePlan(workspace, [{ ...sales, spec }]) })).isError).toBe(false);
    const written = JSON.parse(await readFile(join(workspace, 'visualization', 'sales.vl.json'), 'utf8'));
    expect(written.usermeta).toBeUndefined();
    expect(written.$schema).toBe('https://vega.github.io/schema/vega-lite/v6.json');
    const html = await readFile(join(workspace, 'visualization', 'sales.html'), 'utf8');
    expect(html).not.toContain('attacker.test');
    const { page, problems } = await openChart(join(workspace, 'visualization', 'sales.html'));
    expect(await page.locator('#chart svg .mark-rect path').count()).toBe((await salesRows()).length);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('never replaces a chart: a second one from the same CSV gets a suffix', async () => {
    const json = await writePlan(workspace, [sales, { ...sales, chartTitle: 'Again' }]);
    expect((await draw({ json_path: json })).isError).toBe(false);
    const before = await readFile(join(workspace, 'visualization', 'sales.md'), 'utf8');
    const again = await draw({ json_path: json, output_type: 'svg' });
    expect(again.output).toContain(`Chart: ${workspace}/visualization/sales_2.svg`);
    expect(again.output).toContain(`Chart: ${workspace}/visualization/sales_3.svg`);
    expect((await charts()).filter((name) => name.endsWith('.md')).sort()).toEqual([
      'sales.md',
      'sales_1.md',
      'sales_2.md',
      'sales_3.md',
    ]);
    expect(await readFile(join(workspace, 'visualization', 'sales.md'), 'utf8')).toBe(before);
  });

  it('refuses a spec that does not compile, saying so, and writes nothing', async () => {
    const json = await writePlan(workspace, [{ ...sales, spec: { mark: 'pyramid', encoding: {} } }]);
    const result = await draw({ json_path: json });
    expect(result.isError).toBe(true);
    expect(result.output).toMatch(
      /^Error: 1 of 1 chart could not be made:\n- chart 1 \(Sales by month\): The Vega-Lite spec does not compile: /,
    );
    expect(await charts()).toEqual([]);
  });

  it('refuses a spec that compiles but cannot be drawn, saying why', async () => {
    const spec = {
      mark: 'bar',
      transform: [{ calculate: 'nosuchfunction(datum.sales)', as: 'broken' }],
      encoding: { x: { field: 'broken', type: 'quantitative' } },
    };
    const json = await writePlan(workspace, [{ ...sales, spec }]);
    const result = await draw({ json_path: json });
    expect(result.isError).toBe(true);
    expect(result.output).toContain('The chart does not render: Unrecognized function: nosuchfunction');
    expect(await charts()).toEqual([]);
  });

  it('refuses a spec that loads data from a URL, in a layer as well', async () => {
    const spec = {
      layer: [
        { mark: 'bar', encoding: { x: { field: 'month' }, y: { field: 'sales', type: 'quantitative' } } },
        {
          data: { url: 'file:///etc/passwd', format: { type: 'csv' } },
          mark: 'text',
          encoding: { text: { field: 'root' } },
        },
      ],
    };
    const json = await writePlan(workspace, [{ ...sales, spec }]);
    const result = await draw({ json_path: json });
    expect(result.isError).toBe(true);
    expect(result.output).toContain('The Vega-Lite spec loads data from "file:///etc/passwd"');
    expect(await charts()).toEqual([]);
  });

  it('refuses a CSV outside the workspace: absolute, through .., or through a symlink', async () => {
    const outside = join(tmpdir(), `outside-${process.pid}.csv`);
    await writeFile(outside, 'secret,value\nkey-s3cr3t-token,1\n');
    await symlink(outside, join(workspace, 'data', 'linked.csv'));
    try {
      const json = await writePlan(workspace, [
        { csvFilePath: outside, chartTitle: 'absolute' },
        { csvFilePath: `../${outside.split('/').at(-1)}`, chartTitle: 'dotdot' },
        { csvFilePath: 'data/linked.csv', chartTitle: 'symlink' },
      ]);
      const result = await draw({ json_path: json });
      expect(result.isError).toBe(true);
      const lines = result.output.split('\n');
      expect(lines[0]).toBe('Error: 3 of 3 charts could not be made:');
      for (const line of lines.slice(1)) expect(line).toMatch(/is outside the workspace/);
      expect(result.output).not.toContain('s3cr3t');
      expect(await charts()).toEqual([]);
    } finally {
      await rm(outside, { force: true });
    }
  });

  it('refuses a chart list outside the workspace', async () => {
    const outside = join(tmpdir(), `outside-${process.pid}.json`);
    await writeFile(outside, JSON.stringify([sales]));
    try {
      const result = await draw({ json_path: outside });
      expect(result.isError).toBe(true);
      expect(result.output).toMatch(/^Error: The path .* is outside the workspace/);
    } finally {
      await rm(outside, { force: true });
    }
  });

  it('writes nothing outside the workspace when visualization/ is a symlink that leads out', async () => {
    const elsewhere = await tempWorkspace();
    await symlink(elsewhere, join(workspace, 'visualization'));
    try {
      const result = await draw({ json_path: await writePlan(workspace, [sales]) });
      expect(result.isError).toBe(true);
      expect(result.output).toContain('is outside the workspace');
      expect(await readdir(elsewhere)).toEqual([]);
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  });

  it('says clearly when the chart list is missing, not JSON, or not a chart list', async () => {
    const missing = await draw({ json_path: join(workspace, 'nope.json') });
    expect(missing).toEqual({
      output: `Error: The path ${join(workspace, 'nope.json')} does not exist.`,
      isError: true,
    });
    expect((await draw({ json_path: 'data' })).output).toBe('Error: The path data is a directory; give a file name.');

    await writeFile(join(workspace, 'bad.json'), '[{"csvFilePath": ');
    const notJson = await draw({ json_path: 'bad.json' });
    expect(notJson.output).toMatch(/^Error: bad\.json is not valid JSON: /);

    const json = await writePlan(workspace, [{ csvFilePath: 'data/sales.csv', title: 'no chartTitle' }]);
    const wrong = await draw({ json_path: json });
    expect(wrong.isError).toBe(true);
    expect(wrong.output).toContain('does not list charts as data_visualization reads them');
    expect(wrong.output).toContain('chartTitle');
  });

  it('refuses a CSV larger than maxCsvBytes, and one with no rows, saying which and why', async () => {
    const small = toolSession(createDataVisualization({ workspace, maxCsvBytes: 100 }));
    await writeFile(join(workspace, 'data', 'empty.csv'), 'month,sales\n');
    const json = await writePlan(workspace, [sales, { csvFilePath: 'data/empty.csv', chartTitle: 'Empty' }]);
    const result = await small.call({ json_path: json });
    const { size } = await stat(join(workspace, 'data', 'sales.csv'));
    expect(result.output).toBe(
      [
        'Error: 2 of 2 charts could not be made:',
        `- chart 1 (Sales by month): data/sales.csv is ${size} bytes; files of at most 100 bytes are read.`,
        '- chart 2 (Empty): data/empty.csv has no data rows (a header row, then one row per record).',
      ].join('\n'),
    );
    expect(await charts()).toEqual([]);
  });

  it('names the columns there are when a request names one that is not', async () => {
    const json = await writePlan(workspace, [{ ...sales, x: 'month', y: 'revenue' }]);
    const result = await draw({ json_path: json });
    expect(result.output).toContain(
      'data/sales.csv has no column "revenue"; its columns are "month", "region", "sales", "units".',
    );
  });

  it('makes the charts it can and lists the ones it cannot', async () => {
    const json = await writePlan(workspace, [sales, { csvFilePath: 'data/none.csv', chartTitle: 'Missing' }]);
    const result = await draw({ json_path: json });
    expect(result.isError).toBe(true);
    expect(result.output).toContain(
      '1 of 2 charts could not be made:\n- chart 2 (Missing): The path data/none.csv does not exist.',
    );
    expect(result.output).toContain(`Made 1 chart:\n\n## Sales by month\nChart: ${workspace}/visualization/sales.html`);
  });

  it('keeps a title that looks like markup as text: the page still draws, and nothing injected runs', async () => {
    const title = '</script><script>window.injected = 1</script><b>bold</b> <!--<script>';
    const json = await writePlan(workspace, [{ ...sales, chartTitle: title }]);
    expect((await draw({ json_path: json })).isError).toBe(false);
    const { page } = await openChart(join(workspace, 'visualization', 'sales.html'));
    expect(await page.locator('#chart svg .role-title-text').textContent()).toBe(title);
    expect(await page.title()).toBe(title);
    expect(await page.evaluate('window.injected')).toBeUndefined();
    await page.close();
  });

  it('a page cannot reach the network (its Content-Security-Policy forbids it)', async () => {
    const server = await startWebServer((_request, response) => {
      response.writeHead(200, { 'access-control-allow-origin': '*' }).end('x');
    });
    try {
      expect((await draw({ json_path: await writePlan(workspace, [sales]) })).isError).toBe(false);
      const { page } = await openChart(join(workspace, 'visualization', 'sales.html'));
      const outcome = await page.evaluate(
        (target) =>
          fetch(target).then(
            () => 'fetched',
            () => 'refused',
          ),
        `${server.url}/`,
      );
      await page.close();
      expect(outcome).toBe('refused');
      expect(server.requests).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

describe('drawing on the server', () => {
  it("interprets a spec's expressions and never turns them into code", async () => {
    const { vega } = compileChart({
      data: { values: [{ a: 'x', b: 2 }] },
      transform: [{ calculate: 'datum.b * 21', as: 'answer' }],
      mark: 'bar',
      encoding: { x: { field: 'a', type: 'nominal' }, y: { field: 'answer', type: 'quantitative' } },
    });
    const original = globalThis.Function;
    const refuse = () => {
      throw new Error('code was generated from a string');
    };
    globalThis.Function = new Proxy(original, { apply: refuse, construct: refuse });
    let svg: string;
    try {
      svg = await renderSvg(vega);
    } finally {
      globalThis.Function = original;
    }
    expect(svg).toContain('aria-label="a: x; answer: 42"');
  });
});
