// The root README's embedding snippet for a flow, run with node against a local OpenAI-compatible
// server (as a user would run it against their endpoint), printing what the README says it prints.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createFileStore } from '@openmanus/core';
import { type OpenAiServer, startOpenAiServer } from '@openmanus/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import type { FlowState } from '../src/flowState.js';

const packageDir = join(import.meta.dirname, '..');
const readme = await readFile(join(packageDir, '..', '..', 'README.md'), 'utf8');
const start = readme.indexOf('<!-- flow-embedding:start -->');
const snippet = /```ts\n([\s\S]*?)```/.exec(readme.slice(start))?.[1] ?? '';
const printed = /```text\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('<!-- flow-embedding:end -->')))?.[1] ?? '';

let server: OpenAiServer | undefined;
afterEach(() => server?.close());

const done = (content: string) => ({ content, toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] });

describe('the root README: embedding a flow', () => {
  it('runs as written against an OpenAI-compatible endpoint, saves the flow, and prints what the README shows', async () => {
    server = await startOpenAiServer({
      script: [
        {
          toolCalls: [
            {
              name: 'planning',
              arguments: {
                command: 'create',
                title: 'July rainfall',
                steps: ['[MANUS] Find the July rainfall of Kyoto and Osaka', '[DATA_ANALYSIS] Chart them'],
              },
            },
          ],
        },
        done('Kyoto averages 220 mm of rain in July; Osaka 157 mm.'),
        done('Saved the chart as workspace/rainfall.html.'),
        { content: 'Kyoto gets about 40% more July rain than Osaka; the chart is in workspace/rainfall.html.' },
      ],
    });
    const dir = await mkdtemp(join(packageDir, 'test', '.snippet-'));
    try {
      await writeFile(join(dir, 'flow.mjs'), snippet);
      const { stdout } = await promisify(execFile)(process.execPath, ['flow.mjs'], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '', OPENAI_API_KEY: 'k', OPENAI_BASE_URL: server.baseURL },
      });
      expect(printed).toContain('step 1 (data_analysis)');
      expect(stdout).toBe(printed);
      // Each step reached the executor its label names: Manus's tools, then Data_Analysis's.
      const tools = (i: number) =>
        (server?.requests[i]?.tools ?? []).map((t) => (t as { function: { name: string } }).function.name);
      expect(tools(1)).toContain('str_replace_editor');
      expect(tools(2)).toContain('data_visualization');
      // The store holds the flow as it ended, under the id the snippet gave it.
      const saved = await createFileStore<FlowState>(join(dir, 'flows')).load('rain-1');
      expect(saved?.state).toMatchObject({ status: 'finished', finishReason: 'completed', flowId: 'rain-1' });
      server.assertConsumed();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
