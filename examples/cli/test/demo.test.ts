import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startAnthropicServer } from '@openmanus/core/testing';
import { describe, expect, it } from 'vitest';
import { runNode, tempDir } from './helpers.js';

/** The figures the report must show, computed here independently of the demo's Python. */
async function expectedFigures() {
  const csv = await readFile(fileURLToPath(new URL('../demo/sales.csv', import.meta.url)), 'utf8');
  const rows = csv
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => line.split(','));
  const money = (n: number) => n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  let total = 0;
  const regions = new Map<string, number>();
  const units = new Map<string, number>();
  for (const [, region = '', product = '', count = '0', price = '0'] of rows) {
    const revenue = Number(count) * Number(price);
    total += revenue;
    regions.set(region, (regions.get(region) ?? 0) + revenue);
    units.set(product, (units.get(product) ?? 0) + Number(count));
  }
  const [best = '', bestUnits = 0] = [...units].sort((a, b) => b[1] - a[1])[0] ?? [];
  return {
    orders: rows.length,
    total: money(total),
    regions: [...regions].map(([name, value]) => [name, money(value)] as const),
    best,
    bestUnits,
  };
}

/** A PATH without any Chrome or Chromium on it, and CHROME_PATH naming a file that is not there. */
const NO_BROWSER = { CHROME_PATH: '/nonexistent/chromium' };

describe('pnpm demo without a browser', () => {
  it('says how to get one, then Manus analyses the bundled CSV and writes the report and the page', async () => {
    const cwd = await tempDir();
    const workspace = join(cwd, 'workspace', 'demo');
    const { code, stdout, stderr } = await runNode('demo.js', [], { cwd, env: NO_BROWSER });
    expect(code, stderr).toBe(0);
    expect(stderr).toContain(
      'No browser for the travel demo: CHROME_PATH names /nonexistent/chromium, which is not an executable file.',
    );
    expect(stderr).toContain('`apt-get install chromium`');
    expect(stderr).toContain('`bash scripts/setup.sh`');
    expect(stderr).toContain('Until then, here is the CSV analysis demo instead.');
    expect(stderr).toContain('offline: a local server replays recorded model replies; the tools really run.');
    expect(stderr).toContain('Step 5/20');
    expect(stderr).not.toContain('browser_use');
    expect(stderr).toMatch(/Deliverables:\n {2}workspace\/demo\/report\.md\n {2}workspace\/demo\/report\.html/);
    expect(stdout).toContain(`${workspace}/report.md`);
    expect(existsSync(join(workspace, 'handbook.html'))).toBe(false);

    const figures = await expectedFigures();
    const report = await readFile(join(workspace, 'report.md'), 'utf8');
    expect(report).toContain(`${figures.orders} orders`);
    expect(report).toContain(`**Total revenue: ${figures.total}**`);
    expect(report).toContain(`Best-selling product: **${figures.best}** (${figures.bestUnits} units)`);
    for (const [region, revenue] of figures.regions) expect(report).toContain(`| ${region} | ${revenue} |`);
    const page = await readFile(join(workspace, 'report.html'), 'utf8');
    expect(page).toMatch(/^<!doctype html>/);
    expect(page).toContain(`<strong>${figures.total}</strong>`);
    expect(page.match(/class="bar"/g)).toHaveLength(6);
  });
});

describe('pnpm demo', () => {
  it('live: with an endpoint configured the travel task goes to that endpoint instead', async () => {
    const cwd = await tempDir();
    const { code, stderr } = await runNode('demo.js', [], {
      cwd,
      env: { OPENAI_API_KEY: 'sk-x', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' },
    });
    expect(stderr).toContain('live: model gpt-4o-mini (http://127.0.0.1:9/v1)');
    expect(stderr).toMatch(
      /researches the bundled Kyoto travel site \(http:\/\/127\.0\.0\.1:\d+\/\) in a real browser/,
    );
    expect(stderr).toMatch(/network/);
    expect(code).toBe(1);
  });

  it('live on another provider: OPENMANUS_MODEL names it, its own key and endpoint variables reach it', async () => {
    const cwd = await tempDir();
    const claude = await startAnthropicServer({
      script: [{ content: 'No browsing today.', toolCalls: [{ name: 'terminate', arguments: { status: 'failure' } }] }],
    });
    try {
      const { stderr } = await runNode('demo.js', [], {
        cwd,
        env: {
          OPENMANUS_MODEL: 'anthropic:claude-sonnet-4-5',
          ANTHROPIC_API_KEY: 'sk-ant-test',
          ANTHROPIC_BASE_URL: claude.baseURL,
        },
      });
      expect(stderr).toContain(`live: model claude-sonnet-4-5 (${claude.baseURL})`);
      expect(claude.requests).toHaveLength(1);
      expect(claude.requests[0]?.model).toBe('claude-sonnet-4-5');
      expect(JSON.stringify(claude.requests[0]?.messages)).toContain('Kyoto');
    } finally {
      await claude.close();
    }
  });
});
