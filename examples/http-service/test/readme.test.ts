// The README's "Embedding it" snippet, run with node as written (against the built example:
// `pnpm -C examples/http-service build` first) but for what a test must change, then used over
// HTTP as a client would, with the token the service keeps in its data dir.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { type OpenAiServer, startOpenAiServer } from '@openmanus/core/testing';
import { expect, it } from 'vitest';
import { readmeOf, snippetDirs } from '../../../packages/core/test/readmeCheck.js';
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
  expect(existsSync(join(exampleDir, 'dist', 'service.js')), 'run pnpm -C examples/http-service build').toBe(true);
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
    ["'./src/service.js'", "'../../dist/service.js'"], // the example's src/, built; run from test/.snippet-*/
    ["'/srv/agent'", JSON.stringify(workspace)],
    ["'/var/lib/agent-service'", JSON.stringify(dataDir)],
    ['listen(8080)', 'listen(0)'], // a free port: the snippet prints which
  ]);
  for (const call of [
    "createOpenAiLlm({ model: 'gpt-4o-mini' })",
    'await createAgentService({',
    'agent: createManus({ workspace: ',
    '  llm,\n',
    "approvals: ['python_execute']",
    'dataDir: ',
    'const port = await service.listen(',
    'const resumed = await service.recover();',
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
