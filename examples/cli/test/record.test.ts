import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, loadTranscript, replayLlm, run } from '@openmanus/core';
import { describe, expect, it } from 'vitest';
import { createCliAgent } from '../src/agents.js';
import { runNode, scriptedModels, tempDir } from './helpers.js';

const endpoint = scriptedModels();

const bundled = (name: string) => fileURLToPath(new URL(`../demo/${name}`, import.meta.url));

describe('openmanus --record', () => {
  it('records the run’s model replies into a transcript that replays the same run offline', async () => {
    const workspace = await tempDir();
    const file = join(await tempDir(), 'runs', 'sixby7.json');
    const { env } = await endpoint([
      { content: 'Computing.', toolCalls: [{ name: 'python_execute', arguments: { code: 'print(6 * 7)' } }] },
      { content: 'The answer is 42.', toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
    ]);
    const task = 'What is 6*7?';
    const cli = await runNode('cli.js', ['--record', file, '--workspace', workspace, '--sandbox', 'none', task], {
      env,
    });
    expect(cli.code, cli.stderr).toBe(0);
    const transcript = await loadTranscript(file);
    expect(transcript.replies.map((reply) => 'content' in reply && reply.content)).toEqual([
      'Computing.',
      'The answer is 42.',
    ]);
    // The workspace is a placeholder: the recording replays from any directory.
    expect(JSON.stringify(transcript)).not.toContain(workspace);

    // The same agent, offline, from another workspace: it replays without diverging.
    const elsewhere = await tempDir();
    const config = loadConfig({ cwd: elsewhere, env });
    if (!config.isOk()) throw new Error('the test config does not load');
    const { search, browser } = config.value;
    const agent = createCliAgent('manus', { workspace: elsewhere, maxSteps: 20, sandbox: 'none', search, browser });
    const replay = replayLlm(transcript, { placeholders: { workspace: elsewhere } });
    const outcome = await run(agent, task, { llm: replay });
    expect(outcome.error).toBeUndefined();
    expect(outcome.answer).toContain('The answer is 42.');
    replay.assertConsumed();
  });

  it('is in --help, for the flow too, and the flow records its calls', async () => {
    expect((await runNode('cli.js', ['--help'])).stdout).toContain('--record <file>');
    expect((await runNode('cli.js', ['flow', '--help'])).stdout).toContain('--record <file>');
    const file = join(await tempDir(), 'flow.json');
    const { env } = await endpoint([{ error: { status: 400, message: 'no plans today' } }]);
    const flow = await runNode('cli.js', ['flow', '--record', file, '--workspace', await tempDir(), 'Plan a trip'], {
      env,
    });
    expect(flow.code).toBe(1);
    const transcript = await loadTranscript(file);
    expect(transcript.replies).toEqual([
      expect.objectContaining({ error: expect.objectContaining({ kind: 'bad_request', status: 400 }) }),
    ]);
  });
});

describe('pnpm demo --record', () => {
  // The committed transcripts are produced this way: re-recorded against the local server that
  // replays them, they come out the same. When an agent's prompts or tools change, this fails:
  // re-record with `pnpm demo --record examples/cli/demo/<file>` (see the README), offline or live.
  const rerecord = async (transcript: string, env: Record<string, string>) => {
    const cwd = await tempDir();
    const file = join(cwd, 'recorded.json');
    const { code, stderr } = await runNode('demo.js', ['--record', file], { cwd, env });
    expect(code, stderr).toBe(0);
    expect(
      JSON.parse(await readFile(file, 'utf8')),
      `demo/${transcript} is out of date: re-record it with pnpm demo --record examples/cli/demo/${transcript}`,
    ).toEqual(JSON.parse(await readFile(bundled(transcript), 'utf8')));
  };

  it('re-records the CSV demo’s committed transcript', async () => {
    await rerecord('transcript.json', { CHROME_PATH: '/nonexistent/chromium' });
  });

  it('re-records the travel demo’s committed transcript (the browser really runs)', async () => {
    await rerecord('travel-transcript.json', {});
  });

  it('refuses an unknown option', async () => {
    const { code, stderr } = await runNode('demo.js', ['--recrod', 'x.json']);
    expect(code).toBe(2);
    expect(stderr).toContain("openmanus demo: Unknown option '--recrod'");
    expect(stderr).toContain('Usage: pnpm demo [--record <transcript.json>]');
  });
});
