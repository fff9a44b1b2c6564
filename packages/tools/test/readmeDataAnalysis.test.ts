// The README's snippets for create_chat_completion and the Data_Analysis agent, run as written
// (as a user would: importing the built package) against a scripted OpenAI-compatible server.
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type OpenAiServer, type OpenAiServerOptions, startOpenAiServer } from '@openmanus/core/testing';
import { afterEach, describe, expect, it } from 'vitest';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The ```ts blocks of the README section under `heading`, in order. */
async function snippets(heading: string): Promise<string[]> {
  const readme = await readFile(join(packageDir, 'README.md'), 'utf8');
  const start = readme.indexOf(`\n## ${heading}`);
  expect(start, heading).toBeGreaterThan(-1);
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
}

let server: OpenAiServer | undefined;
let dir: string | undefined;
afterEach(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  server = undefined;
  dir = undefined;
});

/** Runs a snippet in a directory of its own inside the package, with the model at the scripted server. */
async function runSnippet(snippet: string, script: OpenAiServerOptions['script']) {
  server = await startOpenAiServer({ script });
  dir = await mkdtemp(join(packageDir, 'test', '.snippet-'));
  await writeFile(join(dir, 'snippet.mjs'), snippet);
  const { stdout } = await promisify(execFile)(process.execPath, ['snippet.mjs'], {
    cwd: dir,
    env: { ...process.env, OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'k', OPENMANUS_MODEL: 'gpt-4o' },
  });
  server.assertConsumed();
  return { stdout, dir };
}

describe('the README', () => {
  it('createChatCompletion snippet prints the validated answer', async () => {
    const [snippet] = await snippets('Structured output: `create_chat_completion`');
    const answer = { city: 'Kyoto', population: 1463723, sights: ['Kinkaku-ji', 'Fushimi Inari', 'Gion'] };
    const { stdout } = await runSnippet(snippet ?? '', [
      { toolCalls: [{ name: 'create_chat_completion', arguments: { ...answer, population: '1.46 million' } }] },
      { toolCalls: [{ name: 'create_chat_completion', arguments: answer }] },
    ]);
    expect(stdout).toBe('Kyoto: 1463723\n');
  });

  it('create_chat_completion tool snippet ends the run with the structured verdict', async () => {
    const [, snippet] = await snippets('Structured output: `create_chat_completion`');
    const verdict = { sentiment: 'mixed', reasons: ['great food', 'slow service'] };
    const { stdout } = await runSnippet(snippet ?? '', [
      { toolCalls: [{ name: 'create_chat_completion', arguments: verdict }] },
    ]);
    expect(stdout).toBe('terminated mixed\n');
  });

  it('Data_Analysis snippet runs the agent on its CSV and leaves the chart in workspace/visualization', async () => {
    const [snippet] = await snippets('Data analysis: the `Data_Analysis` agent and its chart tools');
    const prepare = [
      'import json',
      "json.dump([{'csvFilePath': 'sales.csv', 'chartTitle': 'Sales', 'x': 'month', 'y': 'sales'}], open('charts.json', 'w'))",
      "print('charts.json')",
    ].join('\n');
    const { stdout, dir } = await runSnippet(snippet ?? '', [
      {
        toolCalls: [{ name: 'python_execute', arguments: { code: "print(open('sales.csv').read().count('North'))" } }],
      },
      { toolCalls: [{ name: 'visualization_preparation', arguments: { code: prepare } }] },
      { toolCalls: [{ name: 'data_visualization', arguments: { json_path: 'charts.json' } }] },
      { content: 'North sells more.', toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
    ]);
    expect(stdout).toBe('terminated North sells more.\n');
    expect(server?.requests[1]?.messages.findLast((m) => m.role === 'tool')?.content).toBe('3');
    expect((await readdir(join(dir, 'workspace', 'visualization'))).sort()).toEqual([
      'sales.html',
      'sales.md',
      'sales.vl.json',
    ]);
  });
});
