// The data analysis agent in a sandbox: python_execute, visualization_preparation and
// data_visualization share the run's sandbox, so the CSV Python writes there is the one the chart
// is drawn from, and the chart goes there too — on this host under bubblewrap, and in a container
// on the real Docker daemon (whose workspace, /box/workspace, does not exist on this host).
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  createLocalSandboxProvider,
  createOpenAiLlm,
  createPythonExecute,
  run,
  type SandboxProvider,
} from '@openmanus/core';
import { createToolRun } from '@openmanus/core/internal';
import { startOpenAiServer } from '@openmanus/core/testing';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDataAnalysis } from '../../tools/src/dataAnalysis/dataAnalysis.js';
import { createDataVisualization } from '../../tools/src/dataAnalysis/dataVisualization.js';
import { salesWorkspace } from '../../tools/test/chartFiles.js';
import { tempWorkspace } from '../../tools/test/helpers.js';
import { createDockerSandboxProvider } from '../src/dockerProvider.js';
import { dockerReady, SETUP_TIMEOUT, TEST_IMAGE } from './docker.js';

interface Subject {
  readonly name: string;
  /** A provider whose sandboxes work on `workspace` (on this host), and where code in them sees it. */
  readonly make: (workspace: string) => { provider: SandboxProvider; inside: string };
  readonly ready?: () => Promise<unknown>;
}

const BOX = '/box/workspace';
const subjects: Subject[] = [
  {
    name: 'local, under bubblewrap',
    make: (workspace) => ({
      provider: createLocalSandboxProvider({ isolation: 'bwrap', workspace }),
      inside: workspace,
    }),
  },
  {
    name: 'docker',
    make: (workspace) => ({
      provider: createDockerSandboxProvider({ image: TEST_IMAGE, workDir: BOX, workspace }),
      inside: BOX,
    }),
    ready: dockerReady,
  },
];

/** The bars a chart of sales by month of the bundled CSV has, summed here independently of the agent. */
async function monthlyBars(workspace: string): Promise<string[]> {
  const [, ...rows] = (await readFile(join(workspace, 'data', 'sales.csv'), 'utf8')).trim().split('\n');
  const sums = new Map<string, number>();
  for (const [month = '', , sales] of rows.map((row) => row.split(','))) {
    sums.set(month, (sums.get(month) ?? 0) + Number(sales));
  }
  return [...sums].sort(([a], [b]) => a.localeCompare(b)).map(([month, total]) => `month: ${month}; sales: ${total}`);
}

const closing: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(closing.splice(0).map((close) => close()));
});

describe.each(subjects)('data_analysis on $name', ({ make, ready }) => {
  beforeAll(async () => {
    await ready?.();
  }, SETUP_TIMEOUT);

  it('draws the chart from the CSV Python wrote in the sandbox, and writes it there', async () => {
    const host = await salesWorkspace();
    const { provider, inside } = make(host);
    const analyse = [
      'import csv, os',
      'from collections import defaultdict',
      'totals = defaultdict(float)',
      "for row in csv.DictReader(open('data/sales.csv')):",
      "    totals[row['region']] += float(row['sales'])",
      "print(os.getcwd(), os.path.exists('/.dockerenv'))",
      "print(max(totals, key=totals.get), 'sells more')",
    ].join('\n');
    const prepare = [
      'import csv, json',
      'from collections import defaultdict',
      'monthly = defaultdict(float)',
      "for row in csv.DictReader(open('data/sales.csv')):",
      "    monthly[row['month']] += float(row['sales'])",
      `with open('${inside}/monthly.csv', 'w', newline='') as f:`,
      '    out = csv.writer(f)',
      "    out.writerow(['month', 'sales'])",
      '    for month in sorted(monthly):',
      '        out.writerow([month, round(monthly[month])])',
      `json.dump([{'csvFilePath': '${inside}/monthly.csv', 'chartTitle': 'Sales by month', 'chartType': 'bar',`,
      `            'x': 'month', 'y': 'sales'}], open('${inside}/charts.json', 'w'))`,
      `print('${inside}/charts.json')`,
    ].join('\n');
    const look = [
      'import os, re',
      `svg = open('${inside}/visualization/monthly.svg').read()`,
      `print(sorted(os.listdir('${inside}/visualization')))`,
      'print(re.findall(r\'aria-label="(month: [^"]*)"\', svg))',
    ].join('\n');
    const server = await startOpenAiServer({
      script: [
        { toolCalls: [{ name: 'python_execute', arguments: { code: analyse } }] },
        { toolCalls: [{ name: 'visualization_preparation', arguments: { code: prepare } }] },
        {
          toolCalls: [
            { name: 'data_visualization', arguments: { json_path: `${inside}/charts.json`, output_type: 'svg' } },
          ],
        },
        { toolCalls: [{ name: 'python_execute', arguments: { code: look } }] },
        { content: 'North sells more.', toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
      ],
    });
    closing.push(() => server.close());
    const llm = createOpenAiLlm({ model: 'gpt-4o', apiKey: 'k', baseURL: server.baseURL, maxRetries: 0 });
    const agent = createDataAnalysis({ workspace: inside, sandboxProvider: provider });
    const result = await run(agent, 'Which region sells more? Chart sales by month.', { llm, workspace: host });
    expect(result.finishReason, result.error?.message).toBe('terminated');
    server.assertConsumed();

    const observed = server.requests
      .at(-1)
      ?.messages.filter((m) => m.role === 'tool')
      .map((m) => String(m.content));
    // Python ran in the sandbox: in a container when it is Docker's.
    expect(observed?.[0]).toBe(`${inside} ${inside === BOX ? 'True' : 'False'}\nNorth sells more`);
    expect(observed?.[1]).toBe(`${inside}/charts.json`);
    expect(observed?.[2]).toMatch(
      new RegExp(`^Made 1 chart\\.\\n\\n## Sales by month\\nChart: ${inside}/visualization/monthly\\.svg\\n`),
    );
    // Python, in the sandbox, finds the chart and its files, drawn from the rows it wrote.
    const bars = (await monthlyBars(host)).map((bar) => `'${bar}'`).join(', ');
    expect(observed?.[3]).toBe(`['monthly.md', 'monthly.svg', 'monthly.vl.json']\n[${bars}]`);
    // The model was told the sandbox's workspace, and the host's directory is the one it worked on.
    expect(String(server.requests[0]?.messages[0]?.content)).toContain(`Your workspace directory is ${inside}`);
    expect((await readdir(join(host, 'visualization'))).sort()).toEqual([
      'monthly.md',
      'monthly.svg',
      'monthly.vl.json',
    ]);
  }, 120_000);
});

describe.each(subjects)('data_visualization on $name', ({ make, ready }) => {
  /** The tools of one run in a sandbox on a fresh workspace: Python to set files up, and the charts. */
  async function sandboxed(maxCsvBytes?: number) {
    await ready?.();
    const host = await tempWorkspace();
    const { provider, inside } = make(host);
    // Their own workspace is not where they work: the sandbox's is.
    const unused = join(host, 'never-used');
    const toolRun = createToolRun({ workspace: host });
    closing.push(() => toolRun.close());
    const python = createPythonExecute({ workspace: unused, sandboxProvider: provider });
    const charts = createDataVisualization({
      workspace: unused,
      sandboxProvider: provider,
      ...(maxCsvBytes ? { maxCsvBytes } : {}),
    });
    const py = async (code: string) => {
      const event = await toolRun.call(python, { code });
      if (event.type !== 'toolCompleted' || event.isError) throw new Error(`python failed: ${JSON.stringify(event)}`);
      return event.output;
    };
    const draw = async (args: Record<string, unknown>) => {
      const event = await toolRun.call(charts, args);
      if (event.type !== 'toolCompleted') throw new Error(`unexpected ${event.type}`);
      return { output: event.output, isError: event.isError === true };
    };
    return { py, draw, inside, unused };
  }

  const plan = (csv: string) =>
    `import json\nopen('charts.json', 'w').write(json.dumps([{'csvFilePath': '${csv}', 'chartTitle': 'Sales'}]))`;
  const sales = 'month,sales\n2024-01,10\n2024-02,12\n';
  const writeSales = (csv: string) => `open('sales.csv', 'w').write(${JSON.stringify(csv)})`;
  const salesCsv = writeSales(sales);

  it('reads paths relative to the sandbox’s workspace, not its own', async () => {
    const { py, draw, inside, unused } = await sandboxed();
    await py(`${salesCsv}\n${plan('sales.csv')}`);
    const result = await draw({ json_path: 'charts.json', output_type: 'svg' });
    expect(result.isError, result.output).toBe(false);
    expect(result.output).toContain(`Chart: ${inside}/visualization/sales.svg`);
    expect(await py("import os\nprint(sorted(os.listdir('visualization')))")).toBe(
      "['sales.md', 'sales.svg', 'sales.vl.json']",
    );
    expect(existsSync(unused)).toBe(false);
  }, 60_000);

  it('refuses a chart list outside the sandbox’s workspace', async () => {
    const { draw, inside } = await sandboxed();
    for (const path of ['/etc/passwd', '../../etc/passwd']) {
      const result = await draw({ json_path: path });
      expect(result.isError).toBe(true);
      expect(result.output).toContain(`outside the workspace ${inside}`);
    }
  }, 60_000);

  it('refuses a CSV that is a link out of the workspace, and writes nothing', async () => {
    const { py, draw } = await sandboxed();
    await py(`import os\nos.symlink('/etc/passwd', 'leak.csv')\n${plan('leak.csv')}`);
    const result = await draw({ json_path: 'charts.json' });
    expect(result.isError).toBe(true);
    expect(result.output).toContain('symbolic link');
    expect(result.output).not.toContain('root:');
    expect(await py("import os\nprint(os.path.exists('visualization'))")).toBe('False');
  }, 60_000);

  it('never replaces a file there, and refuses a CSV over the size limit', async () => {
    const limit = Buffer.byteLength(sales) - 1;
    const { py, draw, inside } = await sandboxed(limit);
    await py(
      `import os\n${salesCsv}\n${plan('sales.csv')}\nos.mkdir('visualization')\nopen('visualization/sales.svg', 'w').write('mine')`,
    );
    const tooBig = await draw({ json_path: 'charts.json', output_type: 'svg' });
    expect(tooBig.isError).toBe(true);
    expect(tooBig.output).toContain(`sales.csv is ${limit + 1} bytes; files of at most ${limit} bytes are read.`);
    await py(writeSales(sales.slice(0, limit)));
    const drawn = await draw({ json_path: 'charts.json', output_type: 'svg' });
    expect(drawn.output).toContain(`Chart: ${inside}/visualization/sales_1.svg`);
    expect(await py("print(open('visualization/sales.svg').read())")).toBe('mine');
  }, 60_000);
});
