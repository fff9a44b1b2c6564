import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createOpenAiLlm, isStepLimit, run } from '@openmanus/core';
import { type OpenAiServer, startOpenAiServer } from '@openmanus/core/testing';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDataAnalysis } from '../src/dataAnalysis/dataAnalysis.js';
import { salesWorkspace } from './chartFiles.js';
import { launchChromium } from './chromium.js';

let browser: Browser;
let server: OpenAiServer | undefined;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** Sums of `sales` by a column of the bundled CSV, computed here independently of the agent. */
async function salesBy(workspace: string, column: 'month' | 'region') {
  const [header = '', ...lines] = (await readFile(join(workspace, 'data', 'sales.csv'), 'utf8')).trim().split('\n');
  const names = header.split(',');
  const sums = new Map<string, number>();
  for (const line of lines) {
    const cells = line.split(',');
    const key = cells[names.indexOf(column)] ?? '';
    sums.set(key, (sums.get(key) ?? 0) + Number(cells[names.indexOf('sales')]));
  }
  return [...sums].sort(([a], [b]) => a.localeCompare(b));
}

describe('createDataAnalysis', () => {
  it("has OpenManus's name, limits and tools", () => {
    const agent = createDataAnalysis({ workspace: '/srv/data' });
    expect(agent.config).toMatchObject({
      name: 'Data_Analysis',
      maxObserve: 15_000,
      llmProfile: 'data_analysis',
    });
    expect(agent.policies?.find(isStepLimit)?.maxSteps).toBe(20);
    expect(agent.config.tools.map((tool) => tool.name)).toEqual([
      'python_execute',
      'visualization_preparation',
      'data_visualization',
      'terminate',
    ]);
    expect(agent.config.systemPrompt).toContain('Your workspace directory is /srv/data');
    expect(agent.config.nextStepPrompt).toContain('visualization_preparation');
  });

  it('analyses the bundled CSV with real Python and leaves a chart that Chromium draws', async () => {
    const workspace = await salesWorkspace();
    const prepare = [
      'import csv, json',
      'from collections import defaultdict',
      'monthly = defaultdict(float)',
      "for row in csv.DictReader(open('data/sales.csv')):",
      "    monthly[row['month']] += float(row['sales'])",
      `with open('${workspace}/monthly_sales.csv', 'w', newline='') as f:`,
      '    out = csv.writer(f)',
      "    out.writerow(['month', 'sales'])",
      '    for month in sorted(monthly):',
      '        out.writerow([month, round(monthly[month])])',
      `charts = [{'csvFilePath': '${workspace}/monthly_sales.csv', 'chartTitle': 'Total sales by month',`,
      "           'chartType': 'bar', 'x': 'month', 'y': 'sales', 'insights': ['Sales grew every month but April.']}]",
      `json.dump(charts, open('${workspace}/charts.json', 'w'))`,
      `print('${workspace}/charts.json')`,
    ].join('\n');
    const analyse = [
      'import csv',
      'from collections import defaultdict',
      'totals = defaultdict(float)',
      "for row in csv.DictReader(open('data/sales.csv')):",
      "    totals[row['region']] += float(row['sales'])",
      'for region in sorted(totals):',
      "    print(f'{region}: {totals[region]:.0f}')",
    ].join('\n');
    const chart = join(workspace, 'visualization', 'monthly_sales.html');
    server = await startOpenAiServer({
      script: [
        { toolCalls: [{ name: 'python_execute', arguments: { code: analyse } }] },
        { toolCalls: [{ name: 'visualization_preparation', arguments: { code: prepare } }] },
        { toolCalls: [{ name: 'data_visualization', arguments: { json_path: join(workspace, 'charts.json') } }] },
        {
          content: `North sells more than South. The chart is ${chart}.`,
          toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }],
        },
      ],
    });
    const llm = createOpenAiLlm({ model: 'gpt-4o', apiKey: 'k', baseURL: server.baseURL, maxRetries: 0 });
    const result = await run(createDataAnalysis({ workspace }), 'Which region sells more? Chart sales by month.', {
      llm,
    });
    expect(result).toMatchObject({
      finishReason: 'terminated',
      answer: `North sells more than South. The chart is ${chart}.`,
    });
    server.assertConsumed();

    const observed = (request: number) =>
      server?.requests[request]?.messages.findLast((m) => m.role === 'tool')?.content;
    const byRegion = await salesBy(workspace, 'region');
    expect(observed(1)).toBe(byRegion.map(([region, total]) => `${region}: ${total}`).join('\n'));
    expect(observed(2)).toBe(join(workspace, 'charts.json'));
    expect(observed(3)).toMatch(new RegExp(`^Made 1 chart\\.\\n\\n## Total sales by month\\nChart: ${chart}\\n`));

    const page = await browser.newPage();
    await page.goto(`file://${chart}`);
    // Only a chart that is never drawn reaches this: the test's own time-out comes first.
    await page.waitForSelector('#chart svg .role-title-text', { timeout: 600_000 });
    expect(await page.locator('#chart svg .role-title-text').textContent()).toBe('Total sales by month');
    const bars = await page
      .locator('#chart svg .mark-rect path')
      .evaluateAll((paths) => paths.map((path) => path.getAttribute('aria-label')));
    const byMonth = await salesBy(workspace, 'month');
    expect(bars).toEqual(byMonth.map(([month, total]) => `month: ${month}; sales: ${total}`));
    await page.close();
    const insights = await readFile(join(workspace, 'visualization', 'monthly_sales.md'), 'utf8');
    expect(insights).toContain('- Sales grew every month but April.');
  });
});
