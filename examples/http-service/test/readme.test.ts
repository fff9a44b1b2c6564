// The README's "Embedding it" snippet, run with node as written (against the built
// @openmanus/server) but for what a test must change, then used over HTTP as a client would,
// with the token the server keeps in its data dir; and the curl commands of "The API" against
// `pnpm serve`'s program (the built example: `pnpm --filter @openmanus/example-http-service build` first).
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { type OpenAiServer, startOpenAiServer } from '@openmanus/core/testing';
import { expect, it } from 'vitest';
import { readmeOf, snippetDirs } from '../../../packages/core/test/readmeCheck.js';
import { serve } from './child.js';
import { client, finish, onCleanup, tempDir } from './helpers.js';

const exampleDir = join(import.meta.dirname, '..');
const { block } = await readmeOf(exampleDir);
const snippetDir = snippetDirs(exampleDir);

/**
 * The snippet with each of `substitutions` (what the README writes, what the test runs instead)
 * made where the README has it, exactly once; nothing else differs.
 */
function substituted(snippet: string, substitutions: readonly (readonly [string, string])[]): string {
  let code = snippet;
  for (const [written, instead] of substitutions) {
    expect(code.split(written), written).toHaveLength(2);
    code = code.replace(written, instead);
  }
  return code;
}

/** Runs `snippet.mjs` in `dir` until the test ends; resolves with the first line it prints. */
async function start(dir: string, env: Record<string, string>): Promise<string> {
  const child: ChildProcess = spawn(process.execPath, ['snippet.mjs'], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  onCleanup(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill();
      await once(child, 'exit');
    }
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const [line] = (await Promise.race([
    once(createInterface({ input: child.stdout as NodeJS.ReadableStream }), 'line'),
    once(child, 'exit').then(() => {
      throw new Error(`the snippet ended before printing anything:\n${stderr}`);
    }),
  ])) as [string];
  return line;
}

it('"Embedding it": the snippet serves a run that pauses for approval and finishes once approved', async () => {
  const server = join(exampleDir, 'node_modules', '@openmanus', 'server', 'dist', 'index.js');
  expect(existsSync(server), 'run pnpm --filter @openmanus/server build').toBe(true);
  const model: OpenAiServer = await startOpenAiServer({
    script: [
      {
        toolCalls: [
          { id: 'py1', name: 'python_execute', arguments: { code: 'import os; print(os.getcwd()); print(6765)' } },
        ],
      },
      finish('fib(20) is 6765.'),
    ],
  });
  onCleanup(() => model.close());
  const dir = await tempDir();
  const workspace = join(dir, 'workspace');
  const dataDir = join(dir, 'service-data');

  const snippet = block('## Embedding it', 'ts');
  const code = substituted(snippet, [
    ["'/srv/agent'", JSON.stringify(workspace)],
    ["'/var/lib/agent-service'", JSON.stringify(dataDir)],
    ['listen(8080)', 'listen(0)'], // a free port: the snippet prints which
  ]);
  for (const call of [
    "createOpenAiLlm({ model: 'gpt-4o-mini' })",
    'await createServer({',
    'agents: { manus: createManus({ workspace: ',
    '  llm,\n',
    "approvals: ['python_execute']",
    'dataDir: ',
    'const port = await server.listen(',
    'const resumed = await server.recover();',
  ])
    expect(code, call).toContain(call);

  // The snippet's model is the scripted server, through the environment createOpenAiLlm reads.
  const printed = await start(await snippetDir({ 'snippet.mjs': code }), {
    OPENAI_API_KEY: 'test-key',
    OPENAI_BASE_URL: model.baseURL,
  });
  const [, port] = /^listening on port (\d+); resumed 0 runs$/.exec(printed) ?? [];
  expect(port, printed).toBeDefined();

  const token = (await readFile(join(dataDir, 'token'), 'utf8')).trim();
  const { call, events, decide } = client(`http://127.0.0.1:${port}`, token);
  const id = String((await call('POST', '/runs', { task: 'Compute the 20th Fibonacci number with Python' })).json.id);
  expect((await events(id)).at(-1)).toMatchObject({
    type: 'paused',
    run: { status: 'awaiting_approval', pending: [{ kind: 'approval', callId: 'py1', tool: 'python_execute' }] },
  });
  expect(model.requests).toHaveLength(1);
  expect((await decide(id, 'py1')).status).toBe(202);
  expect((await events(id)).at(-1)).toMatchObject({
    type: 'ended',
    run: { status: 'finished', finishReason: 'terminated', answer: 'fib(20) is 6765.' },
  });
  // The approved code ran, in the workspace given, and its output reached the model.
  const observation = model.requests[1]?.messages.findLast((message) => message.role === 'tool')?.content;
  expect(observation).toBe(`${workspace}\n6765`);
  model.assertConsumed();
});

it('"The API": its curl commands, run with bash against `pnpm serve`, start the demo run, approve it and go on', async () => {
  const cwd = await tempDir();
  const served = await serve(cwd);
  const [tokenLine = '', headersLine = '', ...commands] = block('## The API', 'sh').trim().split('\n');
  expect(tokenLine).toBe('TOKEN=$(cat workspace/service-data/token)');
  /** Runs the README's curl command whose arguments after the headers start with `args`, for run `id`, on the port it listens on. */
  const curl = async (args: string, id = '') => {
    const command = commands.find((line) => line.replace(/^curl -sN? +"\$\{H\[@\]\}" +/, '').startsWith(args));
    expect(command, args).toBeDefined();
    const script = [tokenLine, headersLine, command?.replaceAll('localhost:8080', `localhost:${served.port}`)]
      .join('\n')
      .replaceAll('<id>', id);
    const { stdout } = await promisify(execFile)('bash', ['-c', script], {
      cwd,
      env: { PATH: process.env.PATH ?? '' },
    });
    return stdout;
  };
  const { id } = JSON.parse(await curl('-XPOST localhost:8080/runs ')) as { id: string };
  expect(await curl('localhost:8080/runs/<id>/events', id)).toContain('"type":"paused"');
  const run = JSON.parse(await curl('localhost:8080/runs/<id> ', id));
  // The README's effect id is the demo's Python call.
  expect(run).toMatchObject({ status: 'awaiting_approval', pending: [{ effectId: 'approval-2-1' }] });
  expect(JSON.parse(await curl('-XPOST localhost:8080/runs/<id>/approve', id))).toEqual({ id });
  expect((await served.events(id)).at(-1)).toMatchObject({ type: 'ended', run: { status: 'finished' } });
  expect(JSON.parse(await curl('-XPOST localhost:8080/runs/<id>/reject', id)).error).toMatch(
    /not waiting for approval/,
  );
  expect(JSON.parse(await curl('-XPOST localhost:8080/runs/<id>/messages', id))).toEqual({ id });
  expect(String((await served.events(id)).at(-1)?.run?.answer)).toContain('cannot answer "And the 30th?"');
  expect(JSON.parse(await curl('-XPOST localhost:8080/runs/<id>/cancel', id))).toMatchObject({
    status: 'finished',
  });
  const listed = JSON.parse(await curl('localhost:8080/runs ')) as { runs: { id: string }[] };
  expect(listed.runs.map((r) => r.id)).toEqual([id]);
  const trace = JSON.parse(await curl('localhost:8080/runs/<id>/trace', id));
  expect(trace.toolCalls.map((c: { tool: string }) => c.tool)).toContain('python_execute');
});
