// `openmanus flow --data-analysis --sandbox docker`: both executors work in containers of one
// provider (a container per step, the host workspace bound at work_dir), against the real Docker
// daemon and the offline test image (scripts/docker.sh starts and builds them).
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RecordedRequest } from '@openmanus/core/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { docker, dockerReady, SETUP_TIMEOUT, TEST_IMAGE } from '../../../packages/sandbox/test/docker.js';
import { runNode, scriptedModels, tempDir } from './helpers.js';

const endpoint = scriptedModels();
const BOX = '/box/workspace';
const terminate = (content: string) => ({
  content,
  toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }],
});
const toolsOf = (request: RecordedRequest | undefined) =>
  (request?.tools ?? []).map((tool) => (tool as { function: { name: string } }).function.name);
const observationsOf = (request: RecordedRequest | undefined) =>
  request?.messages.filter((m) => m.role === 'tool').map((m) => String(m.content)) ?? [];

beforeAll(() => dockerReady(), SETUP_TIMEOUT);

describe('openmanus flow --sandbox', () => {
  it('gives the data_analysis executor the docker provider too: its Python, data and charts in a container', async () => {
    const workspace = await tempDir();
    const cwd = await tempDir();
    await writeFile(
      join(cwd, 'config.toml'),
      `[llm]\nmodel = "gpt-4o"\n\n[sandbox]\nimage = "${TEST_IMAGE}"\nwork_dir = "${BOX}"\nmemory_limit = "256m"\n`,
    );
    const rows = [
      ['2024-01', 120],
      ['2024-01', 30],
      ['2024-02', 90],
    ] as const;
    const csv = ['month,sales', ...rows.map((row) => row.join(','))].join('\\n');
    const prepare = [
      'import csv, json',
      'from collections import defaultdict',
      'monthly = defaultdict(int)',
      "for row in csv.DictReader(open('data/sales.csv')):",
      "    monthly[row['month']] += int(row['sales'])",
      `with open('${BOX}/monthly.csv', 'w', newline='') as f:`,
      "    csv.writer(f).writerows([['month', 'sales'], *sorted(monthly.items())])",
      `json.dump([{'csvFilePath': '${BOX}/monthly.csv', 'chartTitle': 'Sales by month', 'chartType': 'bar',`,
      `           'x': 'month', 'y': 'sales'}],`,
      `          open('${BOX}/charts.json', 'w'))`,
    ].join('\n');
    const { server, env } = await endpoint([
      {
        toolCalls: [
          {
            name: 'planning',
            arguments: {
              command: 'create',
              plan_id: 'p',
              title: 'Sales',
              steps: ['[MANUS] Save the sales data', '[DATA_ANALYSIS] Chart sales by month'],
            },
          },
        ],
      },
      {
        toolCalls: [
          {
            name: 'bash',
            arguments: {
              command: `mkdir -p data && printf '${csv}\\n' > data/sales.csv && test -f /.dockerenv && pwd`,
            },
          },
        ],
      },
      terminate('Saved data/sales.csv.'),
      {
        toolCalls: [
          {
            name: 'python_execute',
            arguments: {
              code: "import os\nprint(os.path.exists('/.dockerenv'), os.getuid() != 0, os.getcwd(), len(open('data/sales.csv').readlines()))",
            },
          },
        ],
      },
      { toolCalls: [{ name: 'visualization_preparation', arguments: { code: prepare } }] },
      {
        toolCalls: [{ name: 'data_visualization', arguments: { json_path: `${BOX}/charts.json`, output_type: 'svg' } }],
      },
      terminate('Charted sales by month.'),
      { content: 'Saved the sales data and charted it by month.' },
    ]);
    const { code, stderr } = await runNode(
      'cli.js',
      [
        'flow',
        '--data-analysis',
        '--sandbox',
        'docker',
        '--config',
        join(cwd, 'config.toml'),
        '--workspace',
        workspace,
        'Chart the sales by month',
      ],
      { env, cwd },
    );
    expect(code, stderr).toBe(0);
    server.assertConsumed();

    // Manus's shell ran in a container at work_dir.
    const manus = server.requests.filter((request) => toolsOf(request).includes('bash'));
    expect(observationsOf(manus.at(-1))[0]).toMatch(new RegExp(`^${BOX}\\n`));
    // So did data_analysis's Python, as a non-root user, on the data manus left in the shared workspace.
    const analyst = server.requests.filter((request) => toolsOf(request).includes('data_visualization'));
    expect(String(analyst[0]?.messages[0]?.content)).toContain(`Your workspace directory is ${BOX}`);
    const [python, prepared, drawn] = observationsOf(analyst.at(-1));
    expect(python).toBe(`True True ${BOX} ${rows.length + 1}`);
    expect(prepared).toBe('Execution finished with no output.');
    // The chart was drawn from the CSV Python wrote in the container, and written there.
    expect(drawn).toMatch(
      new RegExp(`^Made 1 chart\\.\\n\\n## Sales by month\\nChart: ${BOX}/visualization/monthly\\.svg\\n`),
    );
    expect((await readdir(join(workspace, 'visualization'))).sort()).toEqual([
      'monthly.md',
      'monthly.svg',
      'monthly.vl.json',
    ]);
    const totals = new Map<string, number>();
    for (const [month, sales] of rows) totals.set(month, (totals.get(month) ?? 0) + sales);
    const svg = await readFile(join(workspace, 'visualization', 'monthly.svg'), 'utf8');
    expect([...svg.matchAll(/aria-label="(month: [^"]*)"/g)].map((match) => match[1])).toEqual(
      [...totals].map(([month, total]) => `month: ${month}; sales: ${total}`),
    );
    // Each step's container is removed with its run.
    const left = await docker.listContainers({ all: true, filters: { label: ['openmanus.sandbox=1'] } });
    expect(left.filter((container) => container.Mounts.some((mount) => mount.Source === workspace))).toEqual([]);
  }, 180_000);

  it('refuses a sandbox it does not know', async () => {
    const { code, stderr } = await runNode('cli.js', ['flow', '--sandbox', 'podman', 'x'], {
      env: { OPENAI_API_KEY: 'sk-test' },
    });
    expect(code).toBe(2);
    expect(stderr).toBe(
      'openmanus flow: --sandbox must be "auto", "bwrap", "none", "local", "docker" or "daytona", got "podman"\n',
    );
  });
});
