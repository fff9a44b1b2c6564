import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgent } from '../src/kernel/agent.js';
import { dueCompaction } from '../src/kernel/compaction.js';
import { selectWindow } from '../src/kernel/memory.js';
import type { Message } from '../src/kernel/messages.js';
import { step } from '../src/kernel/reducer.js';
import type { AgentState } from '../src/kernel/state.js';
import { messageTokens } from '../src/kernel/tokens.js';
import { createOpenAiLlm } from '../src/llm/openai.js';
import { restore } from '../src/shell/restore.js';
import { resume, run } from '../src/shell/run.js';
import { type OpenAiServer, startOpenAiServer } from '../src/testing/server.js';
import { defineTool } from '../src/tools/defineTool.js';
import { terminate } from '../src/tools/terminate.js';
import { call, done, drive, ofType, on, replied, testConfig } from './helpers.js';

const long = (label: string) => `${label}: ${'x'.repeat(400)}`;
// Summaries once the history passes ~250 estimated tokens, keeping the newest turn in full.
const config = testConfig({ memory: { maxMessages: 100, summarize: { atTokens: 250, keepTurns: 1 } } });
const echo = (n: number) => call('echo', { text: `e${n}` }, `c${n}`);

/** Two turns with long tool results: the history is past the threshold when the third request is due. */
const twoTurns = () =>
  drive(config, 'Collect the facts', [
    replied('one', [echo(1)]),
    done('c1', long('first')),
    replied('two', [echo(2)]),
    done('c2', long('second')),
  ]);

describe('summarising older turns', () => {
  it('asks the model for a summary before the request that would carry too much history', () => {
    const { state, effects } = twoTurns();
    expect(state.status).toBe('awaiting_llm');
    expect(state.compacting).toEqual({ upTo: 3 });
    expect(effects).toHaveLength(1);
    const [summarise] = ofType(effects, 'callLlm');
    expect(summarise?.id).toBe(`compact-${state.requestSeq}`);
    expect(summarise?.request.tools).toEqual([]);
    expect(summarise?.request.toolChoice).toBe('none');
    const asked = String(summarise?.request.messages[1]?.content);
    expect(asked).toContain("The agent's task: Collect the facts");
    expect(asked).toContain('echo returned: first: xxx');
    // The newest turn is kept in full, so it is not summarised.
    expect(asked).not.toContain('second');
  });

  it('sends the task, the summary and the newest turn whole, and keeps the full transcript in the state', () => {
    const { state } = twoTurns();
    const [next, effects] = step(config, state, {
      type: 'llmResponded',
      effectId: `compact-${state.requestSeq}`,
      content: 'Found the first fact.',
      toolCalls: [],
      usage: { inputTokens: 50, outputTokens: 5 },
    });
    expect(next.compacting).toBeUndefined();
    expect(next.summary).toEqual({ text: 'Found the first fact.', upTo: 3 });
    expect(next.messages).toBe(state.messages);
    expect(next.usage.llmCalls).toBe(state.usage.llmCalls + 1);
    expect(ofType(effects, 'emit').map((e) => e.observation)).toContainEqual({
      kind: 'memoryCompacted',
      summarised: 2,
    });
    const [request] = ofType(effects, 'callLlm');
    expect(request?.id).toBe(`llm-${state.requestSeq}`);
    const sent = request?.request.messages ?? [];
    expect(sent.map((m) => m.role)).toEqual(['system', 'user', 'user', 'assistant', 'tool', 'user']);
    expect(sent[1]?.content).toBe('Collect the facts');
    expect(sent[2]?.content).toContain('Found the first fact.');
    // The tool call and its result travel together.
    expect(sent[3]).toMatchObject({ role: 'assistant', content: 'two' });
    expect(sent[4]).toMatchObject({ role: 'tool', toolCallId: 'c2' });
  });

  it('goes on without a summary when the model cannot write one, and says so', () => {
    const { state } = twoTurns();
    const [next, effects] = step(config, state, {
      type: 'llmFailed',
      effectId: `compact-${state.requestSeq}`,
      error: { code: 'LLM_SERVER', message: 'HTTP 500' },
    });
    expect(next.summary).toBeUndefined();
    expect(next.compacting).toBeUndefined();
    expect(ofType(effects, 'emit').map((e) => e.observation)).toContainEqual({
      kind: 'compactionFailed',
      error: 'HTTP 500',
    });
    expect(ofType(effects, 'callLlm')[0]?.id).toBe(`llm-${state.requestSeq}`);
  });

  it('ignores an answer to a compaction it is not waiting for, and a model answer while it waits for one', () => {
    const { state } = twoTurns();
    expect(step(config, state, { type: 'llmResponded', effectId: 'compact-1', content: 's', toolCalls: [] })).toEqual([
      state,
      [],
    ]);
    expect(on(config, state, replied('too early'))).toEqual([state, []]);
  });

  it('redoes the summary request on resume, under the same id', () => {
    const { state, effects } = twoTurns();
    const [resumed, again] = step(config, state, { type: 'resumed' });
    expect(resumed).toBe(state);
    expect(again).toEqual(effects);
  });

  it('summarises again later, from the previous summary on', () => {
    const { state } = twoTurns();
    const [summarised] = step(config, state, {
      type: 'llmResponded',
      effectId: `compact-${state.requestSeq}`,
      content: 'S1',
      toolCalls: [],
    });
    let current = summarised;
    for (const [event] of [[replied('three', [echo(3)])], [done('c3', long('third'))]] as const)
      [current] = on(config, current, event);
    expect(current.compacting).toEqual({ upTo: 5 });
    const [, effects] = step(config, current, { type: 'resumed' });
    const asked = String(ofType(effects, 'callLlm')[0]?.request.messages[1]?.content);
    expect(asked).toContain('The summary so far:\nS1');
    expect(asked).toContain('second');
    expect(asked).not.toContain('first');
  });

  it('leaves a cancelled compaction out of the final state, which restores', async () => {
    const { state } = twoTurns();
    const [cancelled] = step(config, state, { type: 'cancelled', reason: 'stop' });
    expect(cancelled.compacting).toBeUndefined();
    await expect(restore(JSON.parse(JSON.stringify(cancelled)))).resolves.toMatchObject({ finishReason: 'cancelled' });
    await expect(restore(JSON.parse(JSON.stringify(state)))).resolves.toMatchObject({ compacting: { upTo: 3 } });
    await expect(restore({ ...state, status: 'finished', finishReason: 'answered' })).rejects.toThrow(/compacting/);
  });

  it('does not summarise below the threshold, or when only the kept turns are left', () => {
    const small = drive(config, 'Hi', [replied('one', [echo(1)]), done('c1', 'short')]);
    expect(small.state.compacting).toBeUndefined();
    const keepAll = testConfig({ memory: { maxMessages: 100, summarize: { atTokens: 10, keepTurns: 50 } } });
    const kept = drive(keepAll, 'Collect', [replied('one', [echo(1)]), done('c1', long('first'))]);
    expect(kept.state.compacting).toBeUndefined();
    expect(ofType(kept.effects, 'callLlm')[0]?.id).toMatch(/^llm-/);
  });
});

describe('the count of history tokens the check reads', () => {
  it('is kept in the state as messages come, and the check reads it rather than the history', () => {
    const small = drive(config, 'Hi', [
      replied('one', [echo(1)]),
      done('c1', 'short'),
      replied('two', [echo(2)]),
      done('c2', 'short'),
    ]);
    const tokens = small.state.messages.reduce((sum, m) => sum + messageTokens(m, 'estimate'), 0);
    expect(small.state.historyTokens).toEqual({ tokenizer: 'estimate', from: 0, to: 5, tokens });
    // A count past the threshold (as if the messages were long) is taken at its word.
    const claimed = { ...small.state, historyTokens: { ...small.state.historyTokens, tokens: 10_000 } } as AgentState;
    expect(dueCompaction(config, claimed)).toEqual({ upTo: 3 });
    expect(dueCompaction(config, small.state)).toBeUndefined();
  });

  it('a state saved without a count (as earlier versions saved them) is counted afresh, then kept', async () => {
    const { state } = twoTurns();
    const { historyTokens: kept, ...old } = JSON.parse(JSON.stringify(state)) as AgentState;
    const restored = await restore(old);
    expect(restored.historyTokens).toBeUndefined();
    expect(dueCompaction(config, restored)).toEqual(dueCompaction(config, state));
    const [summarised] = step(config, restored, {
      type: 'llmResponded',
      effectId: `compact-${state.requestSeq}`,
      content: 'S1',
      toolCalls: [],
    });
    const tail = summarised.messages.slice(3).reduce((sum, m) => sum + messageTokens(m, 'estimate'), 0);
    expect(summarised.historyTokens).toEqual({ tokenizer: 'estimate', from: 3, to: 5, tokens: tail });
    expect(kept?.tokens).toBeGreaterThan(tail);
  });

  it('is not kept by an agent that does not summarise', () => {
    const plain = drive(testConfig(), 'Hi', [replied('one', [echo(1)]), done('c1', 'short')]);
    expect(plain.state).not.toHaveProperty('historyTokens');
  });
});

describe('a token-aware window', () => {
  const user = (content: string): Message => ({ role: 'user', content });
  const asked = (content: string, id: string): Message => ({
    role: 'assistant',
    content,
    toolCalls: [{ id, name: 'echo', arguments: '{}' }],
  });
  const result = (id: string, content: string): Message => ({ role: 'tool', content, toolCallId: id, name: 'echo' });
  const count = (m: Message) => Math.ceil(m.content.length / 4);
  const history: Message[] = [
    user('task'),
    asked('a1', 'c1'),
    result('c1', 'r'.repeat(400)),
    asked('a2', 'c2'),
    result('c2', 'short'),
  ];

  it('keeps whole turns from the end within the token limit, and always the task and the newest turn', () => {
    const labels = (ms: readonly Message[]) => ms.map((m) => m.content.slice(0, 5));
    expect(labels(selectWindow(history, 0, 100, { maxTokens: 1000, count }).messages)).toEqual(labels(history));
    expect(labels(selectWindow(history, 0, 100, { maxTokens: 50, count }).messages)).toEqual(['task', 'a2', 'short']);
    expect(labels(selectWindow(history, 0, 100, { maxTokens: 1, count }).messages)).toEqual(['task', 'a2', 'short']);
  });

  it('never starts on a tool result, never loses the task, never splits a call from its results (property)', () => {
    const turn = fc.tuple(fc.string({ maxLength: 40 }), fc.array(fc.string({ maxLength: 200 }), { maxLength: 3 }));
    fc.assert(
      fc.property(
        fc.array(turn, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 400 }),
        (turns, maxTokens) => {
          const messages: Message[] = [user('task')];
          turns.forEach(([text, results], t) => {
            if (results.length === 0) messages.push({ role: 'assistant', content: text });
            else {
              const calls = results.map((_, i) => ({ id: `c${t}-${i}`, name: 'echo', arguments: '{}' }));
              messages.push({ role: 'assistant', content: text, toolCalls: calls });
              for (const [i, r] of results.entries()) messages.push(result(`c${t}-${i}`, r));
            }
          });
          const window = selectWindow(messages, 0, 100, { maxTokens, count }).messages;
          expect(window[0]).toBe(messages[0]);
          expect(window[1]?.role).not.toBe('tool');
          const offered = new Set(
            window.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.id) : [])),
          );
          const answered = window.filter((m) => m.role === 'tool').map((m) => (m.role === 'tool' ? m.toolCallId : ''));
          expect(answered.every((id) => offered.has(id))).toBe(true);
          expect(answered.length).toBe(offered.size);
          expect(window.at(-1)).toBe(messages.at(-1));
        },
      ),
    );
  });

  it('trims the request by tokens', () => {
    const trimmed = testConfig({ memory: { maxMessages: 100, maxTokens: 60 } });
    const { effects } = drive(trimmed, 'Collect', [
      replied('one', [echo(1)]),
      done('c1', long('first')),
      replied('two', [echo(2)]),
      done('c2', 'short'),
    ]);
    const sent = ofType(effects, 'callLlm')[0]?.request.messages ?? [];
    expect(sent.map((m) => m.content)).not.toContain(long('first'));
    expect(ofType(effects, 'emit').map((e) => e.observation)).toContainEqual({
      kind: 'memoryTrimmed',
      dropped: 2,
      shrunk: 0,
    });
  });
});

describe('compaction in a run against the local OpenAI-compatible server', () => {
  let server: OpenAiServer | undefined;
  afterEach(() => server?.close());

  it('summarises through the same model, and the run, its checkpoints and a resume carry the summary', async () => {
    const lookup = defineTool({
      name: 'lookup',
      description: 'Looks a fact up.',
      parameters: { type: 'object', properties: { topic: { type: 'string' } }, required: ['topic'] },
      execute: ({ topic }: { topic: string }) => long(`facts about ${topic}`),
    });
    const agent = createAgent({
      name: 'researcher',
      tools: [lookup, terminate],
      tokenizer: 'cl100k_base',
      memory: { maxMessages: 100, summarize: { atTokens: 150, keepTurns: 1 } },
    });
    const ask = (topic: string) => ({ toolCalls: [{ name: 'lookup', arguments: { topic } }] });
    server = await startOpenAiServer({
      script: [
        ask('temples'),
        ask('gardens'),
        { content: 'Temples: many.' },
        { content: 'Kyoto has temples and gardens.' },
      ],
    });
    const llm = createOpenAiLlm({ model: 'gpt-4o', apiKey: 'k', baseURL: server.baseURL, maxRetries: 0 });
    const saved: AgentState[] = [];
    const outcome = await run(agent, 'Research Kyoto', { llm, checkpoint: (state) => void saved.push(state) });
    expect(outcome).toMatchObject({ status: 'finished', answer: 'Kyoto has temples and gardens.' });
    const [, , summarise, last] = server.requests;
    expect(summarise?.tools).toBeUndefined();
    expect(String(summarise?.messages[1]?.content)).toContain('facts about temples');
    expect(JSON.stringify(last?.messages)).toContain('Temples: many.');
    expect(JSON.stringify(last?.messages)).not.toContain('facts about temples');
    expect(JSON.stringify(last?.messages)).toContain('facts about gardens');
    expect(outcome.state.summary?.text).toBe('Temples: many.');
    // Every checkpoint restores, the one taken while the summary was being written included.
    const writing = saved.find((state) => state.compacting);
    expect(writing).toBeDefined();
    for (const state of saved) await restore(JSON.parse(JSON.stringify(state)));

    await server.close();
    server = await startOpenAiServer({ script: [{ content: 'Temples: many (again).' }, { content: 'Done again.' }] });
    const again = createOpenAiLlm({ model: 'gpt-4o', apiKey: 'k', baseURL: server.baseURL, maxRetries: 0 });
    const resumed = await resume(agent, JSON.parse(JSON.stringify(writing)), { llm: again });
    expect(resumed.answer).toBe('Done again.');
    expect(String(server.requests[0]?.messages[0]?.content)).toContain('You summarise the work of an AI agent');
  });
});
