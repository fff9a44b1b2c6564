import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { loadConfig, ok } from '@openmanus/core';
import { processesMatching, type RecordedRequest } from '@openmanus/core/testing';
import { describe, expect, it } from 'vitest';
import { flowCommand } from '../src/flowCommand.js';
import { useDataAnalysisAgent } from '../src/flowOptions.js';
import type { SessionIo } from '../src/session.js';
import { runNode, scriptedModels, tempDir } from './helpers.js';

const endpoint = scriptedModels();
const ESC = '\u001b';

/** A stream that keeps what is written to it, as a terminal (`columns`) or as a pipe. */
function sink(terminal?: { columns: number }) {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  if (terminal) Object.assign(stream, { isTTY: true, columns: terminal.columns });
  return { stream, text: () => text };
}

/** `openmanus flow` in this process, with its output kept: pipes unless `stdout` is given. */
async function flow(args: string[], env: Record<string, string>, stdout = sink(), stderr = sink()) {
  const io: SessionIo = { stdin: process.stdin, stdout: stdout.stream, stderr: stderr.stream, env };
  const code = await flowCommand(args, io);
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** A config.toml pointing at the scripted model, with more sections after [llm]. */
async function configFor(baseURL: string, more = '') {
  const file = join(await tempDir(), 'config.toml');
  await writeFile(file, `[llm]\nmodel = "planner"\nbase_url = "${baseURL}"\napi_key = "sk-test"\n${more}`);
  return file;
}

const plan = (...steps: string[]) => ({
  toolCalls: [
    { name: 'planning', arguments: { command: 'create', plan_id: 'p', title: 'Notes and their count', steps } },
  ],
});
const terminate = (content: string, status: 'success' | 'failure' = 'success') => ({
  content,
  toolCalls: [{ name: 'terminate', arguments: { status } }],
});
const TWO_STEPS = plan('[MANUS] Write notes.txt with three lines', '[DATA_ANALYSIS] Count the lines of notes.txt');

/** The model's side of the two-step flow: the plan, manus writes the file, data_analysis counts its lines, the summary. */
const twoStepScript = (workspace: string) => [
  TWO_STEPS,
  {
    toolCalls: [
      {
        name: 'str_replace_editor',
        arguments: { command: 'create', path: join(workspace, 'notes.txt'), file_text: 'one\ntwo\nthree\n' },
      },
    ],
  },
  terminate('Wrote notes.txt.'),
  {
    toolCalls: [
      { name: 'python_execute', arguments: { code: 'print(len(open("notes.txt").read().splitlines()), "lines")' } },
    ],
  },
  terminate('notes.txt has 3 lines.'),
  { content: 'Wrote notes.txt (three lines) and counted them: 3 lines.' },
];

/** The plan views printed in a log: the marks of each view's steps, in order. */
const marksOf = (stdout: string) =>
  stdout
    .split('\n\n')
    .filter((block) => block.startsWith('Plan: '))
    .map((view) => [...view.matchAll(/^ {2}\d+\. (\[.\])/gm)].map((match) => match[1]).join(''));

const toolsOf = (request: RecordedRequest | undefined) =>
  (request?.tools ?? []).map((tool) => (tool as { function: { name: string } }).function.name);

describe('openmanus flow', () => {
  it('runs a two-step plan end to end: each step to its executor, the plan view as marks change, the summary', async () => {
    const workspace = await tempDir();
    const { server } = await endpoint(twoStepScript(workspace));
    const config = await configFor(
      server.baseURL,
      '[llm.data_analysis]\nmodel = "analyst"\n\n[runflow]\nuse_data_analysis_agent = true\n',
    );
    const { code, stdout, stderr } = await flow(
      ['--config', config, '--workspace', workspace, 'Write three notes and count them'],
      {},
    );
    expect(code, stderr).toBe(0);
    expect(await readFile(join(workspace, 'notes.txt'), 'utf8')).toBe('one\ntwo\nthree\n');
    // Step 1 goes [ ] → [→] → [✓], after step 0 did.
    expect(marksOf(stdout)).toEqual(['[→][ ]', '[✓][→]', '[✓][✓]']);
    expect(stdout).toContain(
      [
        'Plan: Notes and their count',
        'Progress: 1/2 steps completed (50%)',
        '  0. [✓] [MANUS] Write notes.txt with three lines',
        '  1. [→] [DATA_ANALYSIS] Count the lines of notes.txt',
      ].join('\n'),
    );
    expect(stdout.endsWith('Plan completed:\n\nWrote notes.txt (three lines) and counted them: 3 lines.\n')).toBe(true);
    // Each executor's progress, led by its step; the count came from real python.
    expect(stderr).toContain('step 0 [manus]   → str_replace_editor(command: "create"');
    expect(stderr).toContain('step 1 [data_analysis]   → python_execute(code:');
    expect(stderr).toContain('step 1 [data_analysis]   ← 3 lines');
    expect(stderr).toMatch(/■ flow completed: 2\/2 steps completed, 0 blocked, [\d.]+s, 6 model calls/);
    // The plan names both agents; each step's requests carry its executor's tools; the summary none.
    const [planning, ...rest] = server.requests;
    expect(toolsOf(planning)).toEqual(['planning']);
    expect(String(planning?.messages[0]?.content)).toMatch(/- MANUS: .*\n- DATA_ANALYSIS: /);
    expect(rest.slice(0, 2).map(toolsOf)).toEqual(Array(2).fill(expect.arrayContaining(['str_replace_editor'])));
    expect(rest.slice(2, 4).map(toolsOf)).toEqual(Array(2).fill(expect.arrayContaining(['data_visualization'])));
    expect(rest.slice(2, 4).flatMap(toolsOf)).not.toContain('str_replace_editor');
    expect(toolsOf(rest[4])).toEqual([]);
    // Each executor uses its own [llm.<name>] table when there is one; the plan and the summary [llm].
    expect(server.requests.map((request) => request.model)).toEqual([
      'planner',
      'planner',
      'planner',
      'analyst',
      'analyst',
      'planner',
    ]);
  });

  it('without [runflow] or --data-analysis, manus does every step, [DATA_ANALYSIS] ones too, remembering them', async () => {
    const { server } = await endpoint([
      TWO_STEPS,
      terminate('Wrote it.'),
      terminate('Counted 3.'),
      { content: 'Done.' },
    ]);
    const { code } = await flow(['--config', await configFor(server.baseURL), '--workspace', await tempDir(), 'x'], {});
    expect(code).toBe(0);
    expect(String(server.requests[0]?.messages[0]?.content)).not.toContain('DATA_ANALYSIS');
    expect(server.requests.slice(1, 3).map(toolsOf)).toEqual(
      Array(2).fill(expect.arrayContaining(['str_replace_editor', 'browser_use'])),
    );
    // Manus remembers step 0 in step 1, unless --fresh-memory.
    const step0 = 'Your task now is step 0';
    expect(JSON.stringify(server.requests[2]?.messages)).toContain(step0);
    const fresh = await endpoint([TWO_STEPS, terminate('Wrote it.'), terminate('Counted 3.'), { content: 'Done.' }]);
    const args = ['--fresh-memory', '--config', await configFor(fresh.server.baseURL), '--workspace', await tempDir()];
    expect((await flow([...args, 'x'], {})).code).toBe(0);
    expect(JSON.stringify(fresh.server.requests[2]?.messages)).not.toContain(step0);
    expect(JSON.stringify(fresh.server.requests[2]?.messages)).toContain('Your task now is step 1');
  });

  it('a blocked step shows [!] with its notes; --when-blocked stop ends the flow with exit 1, continue goes on', async () => {
    const steps = plan('Fetch the report from the site', 'Summarise the report');
    const stopped = await endpoint([steps, terminate('The site is down.', 'failure')]);
    const stop = await flow(
      [
        '--config',
        await configFor(stopped.server.baseURL),
        '--when-blocked',
        'stop',
        '--workspace',
        await tempDir(),
        'x',
      ],
      {},
    );
    expect(stop.code).toBe(1);
    expect(marksOf(stop.stdout)).toEqual(['[→][ ]', '[!][ ]']);
    expect(stop.stdout).toContain(
      '  0. [!] Fetch the report from the site\n         notes: The site is down.\n  1. [ ] Summarise the report',
    );
    expect(stop.stdout).toContain('Progress: 0/2 steps completed (0%), 1 blocked');
    expect(stop.stderr).toContain('! step 0 is blocked: The site is down.');
    expect(stop.stderr).toMatch(
      /openmanus flow: stopped \(stopped\): step 0 \("Fetch the report from the site"\) is blocked: The site is down\.\n$/,
    );
    stopped.server.assertConsumed();

    const continued = await endpoint([
      steps,
      terminate('The site is down.', 'failure'),
      terminate('Nothing to summarise.'),
      { content: 'The report could not be fetched.' },
    ]);
    const go = await flow(
      ['--config', await configFor(continued.server.baseURL), '--workspace', await tempDir(), 'x'],
      {},
    );
    expect(go.code).toBe(0);
    expect(marksOf(go.stdout)).toEqual(['[→][ ]', '[!][→]', '[!][✓]']);
    expect(go.stdout.endsWith('Plan completed:\n\nThe report could not be fetched.\n')).toBe(true);
  });

  it('--json prints the flow as compact JSON lines: events with the plan, executors’ items, the result', async () => {
    const { server } = await endpoint([plan('Say hello'), terminate('Hello.'), { content: 'Said hello.' }]);
    const { code, stdout } = await flow(
      ['--json', '--config', await configFor(server.baseURL), '--workspace', await tempDir(), 'greet'],
      {},
    );
    expect(code).toBe(0);
    const items = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(items[0]).toMatchObject({ type: 'event', event: { type: 'started' }, status: 'planning' });
    expect(items).toContainEqual(
      expect.objectContaining({
        type: 'event',
        status: 'running',
        plan: expect.objectContaining({ steps: [{ text: 'Say hello', status: 'in_progress', notes: '' }] }),
      }),
    );
    expect(items).toContainEqual(
      expect.objectContaining({ type: 'agent', executor: 'manus', stepIndex: 0, item: expect.anything() }),
    );
    expect(items.at(-1)).toMatchObject({ type: 'result', result: { finishReason: 'completed' } });
    // No whole states: a line stays small however long the flow.
    expect(stdout).not.toContain('"messages":[');
  });

  it('on a terminal: the plan stays at the bottom, redrawn in place, with the progress scrolling above it', async () => {
    const workspace = await tempDir();
    const { server } = await endpoint(twoStepScript(workspace));
    const screen = sink({ columns: 44 });
    const { code } = await flow(
      ['--data-analysis', '--config', await configFor(server.baseURL), '--workspace', workspace, 'count'],
      { NO_COLOR: '1' },
      screen,
      // stderr on the same terminal
      screen,
    );
    expect(code).toBe(0);
    const written = screen.text();
    expect(written).toContain('\r\u001b[4A\u001b[J');
    expect(written).not.toMatch(new RegExp(`${ESC}\\[\\d+m`)); // NO_COLOR: no colour, still redrawn
    const rows = replay(written);
    // What the person sees at the end: the progress, then the plan once, cut to the width, then the summary.
    expect(rows.filter((row) => row.startsWith('Plan: '))).toEqual(['Plan: Notes and their count']);
    expect(rows.slice(-8)).toEqual([
      'Plan: Notes and their count',
      'Progress: 2/2 steps completed (100%)',
      '  0. [✓] [MANUS] Write notes.txt with thre…',
      '  1. [✓] [DATA_ANALYSIS] Count the lines o…',
      '',
      'Plan completed:',
      '',
      'Wrote notes.txt (three lines) and counted them: 3 lines.',
    ]);
    expect(rows.findIndex((row) => row.startsWith('step 1 [data_analysis]'))).toBeLessThan(rows.length - 8);
    // Only the view must fit on its rows (the progress above it may wrap).
    expect(rows.slice(-8, -4).every((row) => [...row].length < 44)).toBe(true);
  });

  it('--timeout ends a flow whose step runs too long: exit 1 with the reason, its python killed', async () => {
    const marker = `flow-timeout-${Date.now()}`;
    const { server } = await endpoint([
      plan('Wait for a long time'),
      {
        toolCalls: [
          { name: 'python_execute', arguments: { code: `import time  # ${marker}\ntime.sleep(30)`, timeout: 50 } },
        ],
      },
    ]);
    const { code, stderr } = await flow(
      ['--timeout', '0.5', '--config', await configFor(server.baseURL), '--workspace', await tempDir(), 'wait'],
      {},
    );
    expect(code).toBe(1);
    expect(stderr).toMatch(/■ flow timeout: 0\/1 steps completed/);
    expect(stderr).toMatch(/openmanus flow: stopped \(timeout\): the flow ran out of time \(0.5 s\)\n$/);
    expect(processesMatching(marker)).toEqual([]);
  });

  it('answers bad options and a non-boolean [runflow] key with exit 2 and one clear line', async () => {
    const config = await configFor('http://127.0.0.1:9/v1', '[runflow]\nuse_data_analysis_agent = "yes"\n');
    const bad = await flow(['--config', config, 'task'], {});
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      `openmanus flow: ${config}: [runflow].use_data_analysis_agent: expected true or false, got "yes"\n`,
    );
    // The example config file's [runflow] is read as it says.
    const example = loadConfig({ path: join(import.meta.dirname, '../../../config/config.example.toml'), env: {} });
    expect(example.isOk() && useDataAnalysisAgent(example.value)).toEqual(ok(false));
    expect((await flow(['--when-blocked', 'panic', 'x'], {})).stderr).toBe(
      'openmanus flow: --when-blocked must be "continue", "replan" or "stop", got "panic"\n',
    );
    expect((await flow(['--timeout', '0', 'x'], {})).stderr).toBe(
      'openmanus flow: --timeout must be a positive number of seconds, got "0"\n',
    );
    const help = await flow(['--help'], {});
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: openmanus flow \[options\] \[task\.\.\.\]\n/);
    expect(help.stdout).toContain('--when-blocked <what>');
  });

  it('as a real process: reads the task from stdin, runs the flow, exits 0; Ctrl+C cancels with 130', async () => {
    const workspace = await tempDir();
    const { server, env } = await endpoint(twoStepScript(workspace));
    const ran = await runNode('cli.js', ['flow', '--data-analysis', '--workspace', workspace], {
      env,
      input: 'Write three notes and count them\n',
    });
    expect(ran.code, ran.stderr).toBe(0);
    expect(marksOf(ran.stdout)).toEqual(['[→][ ]', '[✓][→]', '[✓][✓]']);
    // The output the site's page on `openmanus flow` shows, as it is.
    const page = await readFile(join(import.meta.dirname, '../../../docs/src/content/docs/cli/flow.md'), 'utf8');
    const section = page.slice(page.indexOf('## What it prints'));
    expect(ran.stdout).toBe(section.match(/```text\n([\s\S]*?)```/)?.[1]);
    expect(String(server.requests[0]?.messages[1]?.content)).toContain('Write three notes and count them');

    const marker = `flow-cancel-${Date.now()}`;
    const slow = await endpoint([
      plan('Wait'),
      {
        toolCalls: [
          { name: 'python_execute', arguments: { code: `import time  # ${marker}\ntime.sleep(30)`, timeout: 50 } },
        ],
      },
    ]);
    const cancelled = await runNode('cli.js', ['flow', '--workspace', workspace, 'wait'], {
      env: slow.env,
      onStart: (child) => {
        child.stderr?.on('data', (chunk: Buffer) => {
          if (chunk.toString().includes('→ python_execute')) setTimeout(() => child.kill('SIGINT'), 300);
        });
      },
    });
    expect(cancelled.code).toBe(130);
    expect(cancelled.stderr).toContain('Cancelling… (press Ctrl+C again to force)');
    expect(cancelled.stderr).toMatch(/■ flow cancelled: 0\/1 steps completed/);
    expect(processesMatching(marker)).toEqual([]);
  });
});

/** The rows a terminal shows after `output`: text, newlines, carriage returns, cursor up, clear to the end. */
function replay(output: string): string[] {
  const rows: string[] = [''];
  let row = 0;
  const pattern = new RegExp(`\r|\n|${ESC}\\[(\\d*)A|${ESC}\\[J|[^\r\n${ESC}]+`, 'g');
  for (const [token, up] of output.matchAll(pattern)) {
    if (token === '\n') {
      row += 1;
      rows[row] ??= '';
    } else if (token === '\r') {
      // Only ever at a row's start here.
    } else if (up !== undefined) row = Math.max(0, row - Number(up || 1));
    else if (token === `${ESC}[J`) rows.splice(row, rows.length - row, '');
    else rows[row] = (rows[row] ?? '') + token;
  }
  return rows.at(-1) === '' ? rows.slice(0, -1) : rows;
}
