// The docs pictures' generators (scripts/docs-pictures/): what can be checked without a browser.
import { describe, expect, it } from 'vitest';
import { ansiToHtml, terminalHtml } from '../../scripts/docs-pictures/ansi.mjs';
import { architectureSvg, boxes } from '../../scripts/docs-pictures/architecture.mjs';
import { benchCharts, benchFigures, number, withoutVersion } from '../../scripts/docs-pictures/bench.mjs';
import { barChart } from '../../scripts/docs-pictures/svg.mjs';

/** The bars of a chart: their row, series, value and width. */
const bars = (svg: string) =>
  [
    ...svg.matchAll(
      /<rect class="bar" data-row="([^"]*)" data-series="(\d+)" data-value="([^"]*)" x="[^"]*" y="[^"]*" width="([^"]*)"/g,
    ),
  ].map((m) => ({ row: m[1], series: Number(m[2]), value: Number(m[3]), width: Number(m[4]) }));

describe('barChart', () => {
  const svg = barChart({
    title: 'A <chart> & "more"',
    unit: 'ms per step',
    series: [{ name: 'first' }, { name: 'second' }],
    rows: [
      { label: 'ours <script>', values: [2, 4], highlight: true },
      { label: 'theirs', values: [8, undefined] },
    ],
    format: (v: number) => `${v} ms`,
    source: 'Source: a test, 2026-12-04',
  });

  it('draws each bar proportional to its value, from 0', () => {
    const drawn = bars(svg);
    expect(drawn.map((b) => [b.row, b.series, b.value])).toEqual([
      ['ours &lt;script&gt;', 0, 2],
      ['ours &lt;script&gt;', 1, 4],
      ['theirs', 0, 8],
    ]);
    const [a, b, c] = drawn.map((bar) => bar.width);
    expect(b / (a ?? 1)).toBeCloseTo(2, 1);
    expect((c ?? 0) / (a ?? 1)).toBeCloseTo(4, 1);
    expect(svg).toContain('not measured');
  });

  it('escapes every label and states its unit and source', () => {
    expect(svg).toContain('A &lt;chart&gt; &amp; &quot;more&quot;');
    expect(svg).not.toContain('<script>');
    expect(svg).not.toContain('<chart>');
    expect(svg).toContain('ms per step');
    expect(svg).toContain('Source: a test, 2026-12-04');
    expect(svg).toContain('8 ms');
  });
});

const stored = `
<!-- cost:start -->
Cost per task (2026-12-03). The rest of the paragraph.

**Research loop: 150 steps of \`search\` / \`fetch_page\`, then the answer**

| contender | requests | input tokens | cacheable | largest request | output tokens | cost, cache at 10 % | cost, cache at 50 % |
|---|---:|---:|---:|---:|---:|---:|---:|
| raw openai loop (append-only) 6.49.0 | 151 | 4,000,000 | 99 % | 56,388 | 2,554 | $1.20 | $5.00 |
| @openmanus/core 0.1.0 | 151 | 2,000,000 | 95 % | 18,913 | 2,554 | $0.600 | $2.50 |
<!-- cost:end -->
<!-- bench:start -->
2026-12-02 · 2 × Some CPU · Node v22.23.3 · medians over 5 processes

| figure | raw openai loop 6.49.0 | raw openai loop + zod 6.49.0 | @openmanus/core 0.1.0 | @openmanus/core via AI SDK port (0.1.0, @ai-sdk/openai-compatible 3.0.92) | @mastra/core 0.24.9 |
|---|---:|---:|---:|---:|---:|
| ms per step, 50-step loop | 3.00 | 3.10 | 3.50 | 3.60 | 9.00 |
| ms per step, 400-step loop | 4.00 | 4.10 | 4.50 | 4.60 | – |
| cold import (ms) | 141 | 187 | 34 | 170 | 821 |
| install: MB on disk | 11.9 | 17.8 | 43.5 | 46.4 | 171.4 |
<!-- bench:end -->
`;

describe('the bench charts, from the stored tables', () => {
  it('reads the figures as the bench wrote them', () => {
    const figures = benchFigures(stored);
    expect(figures.costDate).toBe('2026-12-03');
    expect(figures.benchDate).toBe('2026-12-02');
    expect(figures.machine).toBe('2 × Some CPU · Node v22.23.3');
    expect(figures.cost.map((r) => [r.label, r.inputTokens, r.cacheable, r.cost10, r.cost50])).toEqual([
      ['raw openai loop (append-only) 6.49.0', 4_000_000, 99, 1.2, 5],
      ['@openmanus/core 0.1.0', 2_000_000, 95, 0.6, 2.5],
    ]);
    expect(figures.perStep400.map((r) => r.value)).toEqual([4, 4.1, 4.5, 4.6, undefined]);
  });

  it('charts cost and per-step time, our variants and the zod loop left out, with the source and its date', () => {
    const charts = benchCharts(benchFigures(stored), 'README.md');
    expect(Object.keys(charts)).toEqual([
      'bench-cost.svg',
      'bench-input-tokens.svg',
      'bench-step.svg',
      'bench-import.svg',
    ]);
    const cost = bars(charts['bench-cost.svg'] ?? '');
    expect(cost.map((b) => [b.row, b.value])).toEqual([
      ['raw openai loop (append-only)', 1.2],
      ['raw openai loop (append-only)', 5],
      ['@openmanus/core', 0.6],
      ['@openmanus/core', 2.5],
    ]);
    expect(charts['bench-cost.svg']).toContain('2026-12-03');
    expect(charts['bench-input-tokens.svg']).toContain('95 % cacheable');
    const step = bars(charts['bench-step.svg'] ?? '');
    expect([...new Set(step.map((b) => b.row))]).toEqual(['raw openai loop', '@openmanus/core', '@mastra/core']);
    expect(charts['bench-step.svg']).toContain('2026-12-02');
    expect(charts['bench-step.svg']).toContain('not measured');
  });

  it('parses cells and headings', () => {
    expect(number('1,885,326')).toBe(1885326);
    expect(number('$0.704')).toBe(0.704);
    expect(number('95 %')).toBe(95);
    expect(number('—')).toBeUndefined();
    expect(withoutVersion('@openmanus/core via AI SDK port (0.1.0, @ai-sdk/openai-compatible 3.0.92)')).toBe(
      '@openmanus/core via AI SDK port',
    );
    expect(withoutVersion('@openai/agents 0.14.3 ¹')).toBe('@openai/agents');
  });

  it('says so when the blocks are not there', () => {
    expect(() => benchFigures('# no bench here')).toThrow(/bench:start/);
  });
});

describe('ansiToHtml', () => {
  it('escapes HTML in the text', () => {
    expect(ansiToHtml('<img src=x onerror="alert(1)"> & \'q\'')).toBe(
      '&lt;img src=x onerror=&quot;alert(1)&quot;&gt; &amp; &#39;q&#39;',
    );
  });

  it('maps SGR colours and styles to spans, and resets', () => {
    expect(ansiToHtml('\u001b[1mStep 1\u001b[0m plain')).toBe('<span style="font-weight:bold">Step 1</span> plain');
    expect(ansiToHtml('\u001b[36m→ tool\u001b[0m')).toBe('<span style="color:#56d4dd">→ tool</span>');
    expect(ansiToHtml('\u001b[2;31mx\u001b[39my')).toBe(
      '<span style="opacity:0.6;color:#ff6b6b">x</span><span style="opacity:0.6">y</span>',
    );
  });

  it('drops other escape sequences and control characters, keeps newlines', () => {
    expect(ansiToHtml('a\u001b]0;title\u0007b\u001b[2Kc\r\nd\u0007')).toBe('abc\nd');
  });

  it('puts the command and the output in a terminal window, escaped', () => {
    const html = terminalHtml({ title: 'T <b>', command: 'echo "<x>"', output: '\u001b[32mok\u001b[0m' });
    expect(html).toContain('T &lt;b&gt;');
    expect(html).toContain('echo &quot;&lt;x&gt;&quot;');
    expect(html).toContain('<span style="color:#7ee787">ok</span>');
  });
});

describe('the architecture diagram', () => {
  const svg = architectureSvg();

  it('names the parts: host app, run/stream, reducer, driver, performers, stores, flows and durable runs', () => {
    expect(boxes.map((b) => b.id)).toEqual(
      expect.arrayContaining([
        'host',
        'run',
        'reducer',
        'driver',
        'performers',
        'models',
        'tools',
        'people',
        'stores',
        'reuse',
      ]),
    );
    for (const text of [
      'Host app',
      'run() / stream()',
      'step(config, state, event)',
      '→ [state, effects]',
      'Reducer — pure',
      'Driver',
      'Performers',
      'Model ports',
      'Tools',
      'People',
      'memory · file · SQLite · Postgres',
      '@openmanus/flow',
      '@openmanus/durable',
      'effects',
      'events back',
      'each transition',
    ])
      expect(svg).toContain(text);
  });

  it('is one well-formed SVG on a white card', () => {
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trim().endsWith('</svg>')).toBe(true);
    expect(svg).toContain('fill="#ffffff"');
    expect(svg.match(/<g /g)?.length).toBe(svg.match(/<\/g>/g)?.length);
  });
});
