import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, realpath, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../src/kernel/agent.js';
import { defaultPolicies } from '../src/kernel/policies.js';
import { recordLlm } from '../src/llm/record.js';
import { replayLlm } from '../src/llm/replay.js';
import { loadTranscript, parseTranscript, type Transcript, TranscriptError } from '../src/llm/transcript.js';
import { run } from '../src/shell/run.js';
import type { ScriptedReply } from '../src/testing/script.js';
import { startOpenAiServer } from '../src/testing/server.js';
import { transcriptScript } from '../src/testing/transcriptScript.js';
import { defineTool } from '../src/tools/defineTool.js';
import { useOpenAiServers } from './servers.js';

const { serve, llmFor } = useOpenAiServers({ maxRetries: 0 });
const tempDir = async () => realpath(await mkdtemp(join(tmpdir(), 'openmanus-replay-')));

/** An agent that counts the lines of files in its workspace: a real tool, reading real files. */
function lineCounter(options: { systemPrompt?: string; withCounter?: boolean; maxSteps?: number } = {}) {
  const countLines = defineTool({
    name: 'count_lines',
    description: 'Count the lines of a file',
    parameters: z.object({ path: z.string() }),
    execute: async ({ path }) => `${(await readFile(path, 'utf8')).trim().split('\n').length} lines`,
  });
  const finish = defineTool({
    name: 'finish',
    description: 'End the task',
    parameters: z.object({}),
    terminal: true,
    execute: () => 'done',
  });
  return createAgent({
    name: 'counter',
    systemPrompt: options.systemPrompt ?? 'You count lines.',
    nextStepPrompt: 'What next?',
    tools: options.withCounter === false ? [finish] : [countLines, finish],
    policies: defaultPolicies({ maxSteps: options.maxSteps ?? 5 }),
  });
}

/** A workspace with a three-line file, and the model's decisions about it. */
async function countingJob(lines = ['a', 'b', 'c']) {
  const workspace = await tempDir();
  await writeFile(join(workspace, 'data.txt'), `${lines.join('\n')}\n`);
  const task = `Count the lines of ${workspace}/data.txt`;
  return { workspace, task };
}

const countingScript = (workspace: string): ScriptedReply[] => [
  // Arguments as the model wrote them, spaces and all: a replay must send back the same text.
  { content: 'Counting.', toolCalls: [{ name: 'count_lines', arguments: `{"path": "${workspace}/data.txt"}` }] },
  { content: 'It has 3 lines.', toolCalls: [{ name: 'finish', arguments: {} }] },
];

/** Records the counting run through the openai SDK against the local server. */
async function recordCounting(workspace: string, task: string, file?: string) {
  const server = await serve(countingScript(workspace));
  const llm = recordLlm(llmFor(server), { placeholders: { workspace }, ...(file ? { file } : {}) });
  const outcome = await run(lineCounter(), task, { llm, runId: 'counting' });
  return { outcome, transcript: llm.transcript(), server };
}

describe('recordLlm and replayLlm', () => {
  it('a recorded run replays offline to the same outcome, and the file holds the same transcript', async () => {
    const { workspace, task } = await countingJob();
    const file = join(await tempDir(), 'run.json');
    const { outcome, transcript, server } = await recordCounting(workspace, task, file);
    expect(outcome.finishReason).toBe('terminated');
    expect(server.hits).toBe(2);
    expect(await loadTranscript(file)).toEqual(transcript);
    expect(transcript.model).toBe('gpt-4o-mini');
    expect(transcript.replies).toHaveLength(2);
    expect(transcript.replies[0]).toMatchObject({
      content: 'Counting.',
      toolCalls: [{ id: 'call_0_0', name: 'count_lines', arguments: '{"path": "{{workspace}}/data.txt"}' }],
      request: { toolChoice: 'auto', tools: [expect.stringMatching(/^count_lines \w{12}$/), expect.any(String)] },
    });
    // Compact JSON arguments are kept parsed, readable in the file.
    expect(transcript.replies[1]).toMatchObject({ toolCalls: [{ name: 'finish', arguments: {} }] });
    expect(transcript.replies[1]?.request.messages.map((entry) => entry.replace(/ \w{12}$/, ''))).toEqual([
      'system',
      'user',
      'assistant',
      'tool count_lines',
      'user',
    ]);

    await server.close();
    const replay = replayLlm(await loadTranscript(file), { placeholders: { workspace } });
    const replayed = await run(lineCounter(), task, { llm: replay, runId: 'counting' });
    expect(replayed).toEqual(outcome);
    expect(replay.diverged).toBeUndefined();
    replay.assertConsumed();
  });

  it('placeholders round-trip: the file names none of the run’s values, and it replays in another workspace', async () => {
    const { workspace, task } = await countingJob();
    const { transcript } = await recordCounting(workspace, task);
    expect(JSON.stringify(transcript)).not.toContain(workspace);
    expect(JSON.stringify(transcript)).toContain('{{workspace}}');

    const other = await countingJob();
    const replay = replayLlm(transcript, { placeholders: { workspace: other.workspace } });
    const replayed = await run(lineCounter(), other.task, { llm: replay });
    expect(replayed.error).toBeUndefined();
    expect(replayed.finishReason).toBe('terminated');
    // The tool read the other workspace's file: the path in the replayed call is this run's.
    const tool = replayed.state.messages.find((message) => message.role === 'tool');
    expect(tool?.content).toBe('3 lines');
    const assistant = replayed.state.messages.find((message) => message.role === 'assistant');
    expect(assistant?.role === 'assistant' && assistant.toolCalls?.[0]?.arguments).toBe(
      `{"path": "${other.workspace}/data.txt"}`,
    );
    replay.assertConsumed();
  });

  it('a path that JSON escapes (a quote, a backslash) round-trips in the arguments too', async () => {
    const workspace = join(await tempDir(), 'say "hi" \\ here');
    const server = await serve([{ toolCalls: [{ name: 'count_lines', arguments: { path: `${workspace}/x` } }] }]);
    const llm = recordLlm(llmFor(server), { placeholders: { workspace } });
    const request = { messages: [], tools: [], toolChoice: 'auto' as const };
    await llm.complete(request);
    const recorded = llm.transcript();
    expect(JSON.stringify(recorded)).not.toContain('hi');
    expect(recorded.replies[0]).toMatchObject({ toolCalls: [{ arguments: { path: '{{workspace}}/x' } }] });
    const replayed = await replayLlm(recorded, { placeholders: { workspace: '/elsewhere' } }).complete(request);
    expect(replayed.isOk() && replayed.value.toolCalls[0]?.arguments).toBe('{"path":"/elsewhere/x"}');
  });

  describe('a changed agent diverges, and the run ends naming the model call and what differs', () => {
    const replayAgainst = async (
      change: { systemPrompt?: string; withCounter?: boolean; lines?: string[] },
      transcript?: (t: Transcript) => Transcript,
    ) => {
      const { workspace, task } = await countingJob();
      const recorded = await recordCounting(workspace, task);
      const rerun = change.lines ? await countingJob(change.lines) : { workspace, task };
      const replay = replayLlm((transcript ?? ((t) => t))(recorded.transcript), {
        placeholders: { workspace: rerun.workspace },
      });
      const outcome = await run(lineCounter(change), rerun.task, { llm: replay });
      expect(outcome.status).toBe('failed');
      expect(outcome.error?.message).toContain(replay.diverged);
      expect(() => replay.assertConsumed()).toThrow(replay.diverged);
      return replay.diverged;
    };

    it('its system prompt', async () => {
      expect(await replayAgainst({ systemPrompt: 'You count words.' })).toBe(
        'replay diverged at model call 1 of 2: message 1 of 3 (system) differs: recorded "You count lines.", got "You count words."',
      );
    });

    it('a tool result fed back', async () => {
      expect(await replayAgainst({ lines: ['a', 'b', 'c', 'd'] })).toBe(
        'replay diverged at model call 2 of 2: message 4 of 5 (tool count_lines) differs: recorded "3 lines", got "4 lines"',
      );
    });

    it('a tool removed', async () => {
      expect(await replayAgainst({ withCounter: false })).toBe(
        'replay diverged at model call 1 of 2: the tools differ: missing count_lines',
      );
    });

    it('a call past the end of the recording', async () => {
      expect(await replayAgainst({}, (t) => ({ ...t, replies: t.replies.slice(0, 1) }))).toBe(
        'replay diverged at model call 2: the recording ends after 1 calls',
      );
    });

    it('not checked when the replay is not strict: the recorded replies come in order', async () => {
      const { workspace, task } = await countingJob();
      const { transcript } = await recordCounting(workspace, task);
      const replay = replayLlm(transcript, { strict: false, placeholders: { workspace } });
      const outcome = await run(lineCounter({ systemPrompt: 'You count words.' }), task, { llm: replay });
      expect(outcome.finishReason).toBe('terminated');
    });

    it('an agent that stops before the recording does fails assertConsumed', async () => {
      const { workspace, task } = await countingJob();
      const { transcript } = await recordCounting(workspace, task);
      const replay = replayLlm(transcript, { placeholders: { workspace } });
      const outcome = await run(lineCounter({ maxSteps: 1 }), task, { llm: replay });
      expect(outcome.finishReason).toBe('max_steps');
      expect(replay.diverged).toBeUndefined();
      expect(() => replay.assertConsumed()).toThrow(
        'replay: the agent made 1 model calls; the recording has 2, so it stopped early',
      );
    });
  });

  it('a failed call (HTTP 500) is recorded and replays as the same failure', async () => {
    const { workspace, task } = await countingJob();
    const server = await serve([{ error: { status: 500, message: 'the model is overloaded' } }]);
    const llm = recordLlm(llmFor(server), { placeholders: { workspace } });
    const outcome = await run(lineCounter(), task, { llm, runId: 'failing' });
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.message).toContain('the model is overloaded');
    const transcript = llm.transcript();
    expect(transcript.replies[0]).toMatchObject({ error: { kind: 'server', status: 500 } });

    const replay = replayLlm(parseTranscript(JSON.stringify(transcript)), { placeholders: { workspace } });
    expect(await run(lineCounter(), task, { llm: replay, runId: 'failing' })).toEqual(outcome);
  });

  it('a recording served over HTTP (transcriptScript) gives the same run', async () => {
    const { workspace, task } = await countingJob();
    const { outcome, transcript } = await recordCounting(workspace, task);
    const served = await serve(transcriptScript(transcript, { workspace }));
    const again = recordLlm(llmFor(served), { placeholders: { workspace } });
    expect(await run(lineCounter(), task, { llm: again, runId: 'counting' })).toEqual(outcome);
    // Recorded again from the served recording: the same transcript.
    expect(again.transcript()).toEqual(transcript);
  });

  it('a transcript file that cannot be written stops the run before any model call', async () => {
    const { workspace, task } = await countingJob();
    const server = await serve(countingScript(workspace));
    const blocked = join(workspace, 'data.txt', 'run.json');
    const outcome = await run(lineCounter(), task, { llm: recordLlm(llmFor(server), { file: blocked }) });
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.message).toMatch(/the transcript cannot be saved: E[A-Z]+: .*data\.txt/);
    expect(server.hits).toBe(0);
  });

  it('a run killed mid-way leaves a transcript of the calls it made, which loads and replays them', async () => {
    const { workspace, task } = await countingJob();
    const file = join(await tempDir(), 'crashed.json');
    const server = await startOpenAiServer({
      script: [
        ...countingScript(workspace).slice(0, 1),
        { content: 'Now the crash.', toolCalls: [{ name: 'crash', arguments: {} }] },
        { content: 'never asked' },
      ],
    });
    // A real process, killed by SIGKILL inside its second tool call: no chance to save anything then.
    const script = `
      import { createAgent, createOpenAiLlm, defaultPolicies, defineTool, recordLlm, run } from ${JSON.stringify(new URL('../dist/index.js', import.meta.url).href)};
      const { readFile } = await import('node:fs/promises');
      const { z } = await import('zod');
      const countLines = defineTool({ name: 'count_lines', description: 'Count the lines of a file', parameters: z.object({ path: z.string() }),
        execute: async ({ path }) => (await readFile(path, 'utf8')).trim().split('\\n').length + ' lines' });
      const crash = defineTool({ name: 'crash', description: 'Crash', parameters: z.object({}), execute: () => process.kill(process.pid, 'SIGKILL') });
      const agent = createAgent({ name: 'counter', tools: [countLines, crash], policies: defaultPolicies({ maxSteps: 5 }) });
      const llm = recordLlm(createOpenAiLlm({ model: 'm', apiKey: 'k', baseURL: process.env.BASE_URL, maxRetries: 0 }),
        { file: process.env.TRANSCRIPT, placeholders: { workspace: process.env.WORKSPACE } });
      await run(agent, process.env.TASK, { llm });
    `;
    try {
      const killed = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
        cwd: join(import.meta.dirname, '..'),
        env: { PATH: process.env.PATH, BASE_URL: server.baseURL, TRANSCRIPT: file, WORKSPACE: workspace, TASK: task },
      }).then(
        () => undefined,
        (error: { signal?: string }) => error.signal,
      );
      expect(killed).toBe('SIGKILL');
      expect(server.hits).toBe(2);
    } finally {
      await server.close();
    }
    const transcript = await loadTranscript(file);
    expect(transcript.replies.map((reply) => 'content' in reply && reply.content)).toEqual([
      'Counting.',
      'Now the crash.',
    ]);
    // Each save replaced the file whole: no temporary file is left beside it.
    expect(await readdir(dirname(file))).toEqual(['crashed.json']);
  });

  describe('a transcript that cannot be used gives a clear error', () => {
    const good = async () => {
      const { workspace, task } = await countingJob();
      return JSON.stringify((await recordCounting(workspace, task)).transcript, null, 2);
    };

    it('cut short', async () => {
      const text = await good();
      const file = join(await tempDir(), 'cut.json');
      await writeFile(file, text.slice(0, text.length / 2));
      await expect(loadTranscript(file)).rejects.toThrow(
        new RegExp(`^${file.replaceAll('/', '\\/')} is not valid JSON \\(cut short, or not a transcript\\): `),
      );
      await expect(loadTranscript(file)).rejects.toBeInstanceOf(TranscriptError);
    });

    it('a damaged field, named by its path', async () => {
      const damaged = JSON.parse(await good());
      damaged.replies[1].toolCalls[0].name = 42;
      expect(() => parseTranscript(JSON.stringify(damaged), 'run.json')).toThrow(
        /^run\.json is damaged at replies\[1\]\.toolCalls\[0\]\.name: .*expected string/i,
      );
      delete damaged.replies[0].request;
      expect(() => parseTranscript(JSON.stringify(damaged), 'run.json')).toThrow(
        /^run\.json is damaged at replies\[0\]\.request: /,
      );
    });

    it('not a transcript, or a newer one', async () => {
      expect(() => parseTranscript('[{"content":"hi"}]', 'old.json')).toThrow(
        'old.json is not a transcript: it has no "version" (recordLlm writes one)',
      );
      expect(() => parseTranscript('{"version":2,"model":"m","replies":[]}', 'new.json')).toThrow(
        'new.json is transcript version 2; this version of @openmanus/core reads version 1',
      );
    });
  });
});
