// The README's snippets for create_chat_completion and the Data_Analysis agent, run as written
// against a scripted OpenAI-compatible server.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type OpenAiServer, type OpenAiServerOptions, startOpenAiServer } from '@openmanus/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { readmeOf, snippetRunner } from '../../core/test/readmeCheck.js';

const packageDir = join(import.meta.dirname, '..');
const { blocks } = await readmeOf(packageDir);
const runSnippet = snippetRunner(packageDir);

let server: OpenAiServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Runs a snippet with the model at a server scripted with `script`, which it must use up. */
async function runAgainst(snippet: string, script: OpenAiServerOptions['script']) {
  server = await startOpenAiServer({ script });
  const ran = await runSnippet(snippet, {
    env: { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'k', OPENMANUS_MODEL: 'gpt-4o' },
  });
  server.assertConsumed();
  return ran;
}

describe('the README', () => {
  it('createChatCompletion snippet prints the validated answer', async () => {
    const [snippet] = blocks('## `create_chat_completion`', 'ts');
    const answer = { city: 'Kyoto', population: 1463723, sights: ['Kinkaku-ji', 'Fushimi Inari', 'Gion'] };
    const { stdout } = await runAgainst(snippet ?? '', [
      { toolCalls: [{ name: 'create_chat_completion', arguments: { ...answer, population: '1.46 million' } }] },
      { toolCalls: [{ name: 'create_chat_completion', arguments: answer }] },
    ]);
    expect(stdout).toBe('Kyoto: 1463723\n');
  });

  it('create_chat_completion tool snippet ends the run with the structured verdict', async () => {
    const [, snippet] = blocks('## `create_chat_completion`', 'ts');
    const verdict = { sentiment: 'mixed', reasons: ['great food', 'slow service'] };
    const { stdout } = await runAgainst(snippet ?? '', [
      { toolCalls: [{ name: 'create_chat_completion', arguments: verdict }] },
    ]);
    expect(stdout).toBe('terminated mixed\n');
  });

  it('Data_Analysis snippet runs the agent on its CSV and leaves the chart in workspace/visualization', async () => {
    const [snippet] = blocks('## The data analysis agent: `createDataAnalysis`', 'ts');
    const prepare = [
      'import json',
      "json.dump([{'csvFilePath': 'sales.csv', 'chartTitle': 'Sales', 'x': 'month', 'y': 'sales'}], open('charts.json', 'w'))",
      "print('charts.json')",
    ].join('\n');
    const { stdout, dir } = await runAgainst(snippet ?? '', [
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
