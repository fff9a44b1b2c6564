import { describe, expect, it } from 'vitest';
import type { Message } from '../src/kernel/messages.js';
import { stepLimit, stuckDetection, terminalTools } from '../src/kernel/policies.js';
import { createStep, InvalidEventError, initialState, initialStep, step } from '../src/kernel/reducer.js';
import { loadTokenizer } from '../src/kernel/tokens.js';
import { call, done, drive, ofType, on, replied, stepWith, testConfig } from './helpers.js';

const lastRequest = (effects: Parameters<typeof ofType>[0]) => {
  const [llm] = ofType(effects, 'callLlm');
  if (!llm) throw new Error('expected a callLlm effect');
  return llm.request;
};
const contents = (messages: readonly Message[]) => messages.map((m) => `${m.role}:${m.content}`);

describe('think', () => {
  it('starts with system prompt, task and next-step prompt; the prompt is not stored', () => {
    const [state, effects] = initialStep(testConfig(), 'count to 3');
    expect(state.status).toBe('awaiting_llm');
    expect(state.step).toBe(1);
    expect(contents(lastRequest(effects).messages)).toEqual([
      'system:You are a test agent.',
      'user:count to 3',
      'user:What next?',
    ]);
    expect(contents(state.messages)).toEqual(['user:count to 3']);
    expect(lastRequest(effects).tools.map((t) => t.name)).toEqual([
      'echo',
      'write',
      'terminate',
      'deploy',
      'ask_human',
    ]);
    // The kernel's `initialStep` runs the default policies: OpenManus's 30 steps.
    expect(ofType(effects, 'emit')[0]?.observation).toEqual({ kind: 'stepStarted', step: 1, maxSteps: 30 });
  });

  it('never piles next-step prompts up in memory over many steps', () => {
    const events = [1, 2, 3].flatMap((i) => [replied('', [call('echo', { text: `${i}` }, `e${i}`)]), done(`e${i}`)]);
    const { state, effects } = drive(testConfig(), 'go', events);
    const prompts = lastRequest(effects).messages.filter((m) => m.content === 'What next?');
    expect(prompts).toHaveLength(1);
    expect(state.messages.some((m) => m.content === 'What next?')).toBe(false);
  });
});

describe('act and observe', () => {
  it('turns tool calls into callTool effects with parsed arguments', () => {
    const { state, effects } = drive(testConfig(), 'go', [
      replied('let me', [call('echo', { text: 'a' }, 'a'), call('write', { path: '/x' }, 'b')]),
    ]);
    expect(state.status).toBe('awaiting_tools');
    const calls = ofType(effects, 'callTool');
    expect(calls.map((c) => [c.call.id, c.args, c.parallelSafe])).toEqual([
      ['a', { text: 'a' }, true],
      ['b', { path: '/x' }, false],
    ]);
    expect(new Set(calls.map((c) => c.id)).size).toBe(2);
  });

  it('waits for every call, then appends the results in call order and thinks again', () => {
    const config = testConfig();
    const { state: waiting } = drive(config, 'go', [
      replied('', [call('echo', { text: 'a' }, 'a'), call('echo', { text: 'b' }, 'b')]),
    ]);
    const [partial, none] = on(config, waiting, done('b', 'B'));
    expect(none).toEqual([]);
    expect(partial.status).toBe('awaiting_tools');
    const [next, effects] = on(config, partial, done('a', 'A'));
    expect(next.status).toBe('awaiting_llm');
    expect(next.step).toBe(2);
    const tools = next.messages.filter((m) => m.role === 'tool');
    expect(tools.map((m) => [m.toolCallId, m.content])).toEqual([
      ['a', 'A'],
      ['b', 'B'],
    ]);
    expect(ofType(effects, 'callLlm')).toHaveLength(1);
  });

  it('ignores results for unknown or already answered calls', () => {
    const config = testConfig();
    const { state } = drive(config, 'go', [
      replied('', [call('echo', {}, 'a'), call('echo', { text: 'x' }, 'b')]),
      done('a'),
    ]);
    expect(on(config, state, done('a', 'again'))).toEqual([state, []]);
    expect(on(config, state, done('zzz'))).toEqual([state, []]);
  });

  it('cuts long observations at maxObserve with a visible marker', () => {
    const { state } = drive(testConfig({ maxObserve: 10 }), 'go', [
      replied('', [call('echo', {}, 'a')]),
      done('a', 'x'.repeat(25)),
    ]);
    const tool = state.messages.find((m) => m.role === 'tool');
    expect(tool?.content).toBe(`${'x'.repeat(10)}\n…[observation truncated: 15 more characters]`);
  });

  it('answers an unknown tool and bad JSON with errors the model sees next turn', () => {
    const { state, effects } = drive(testConfig(), 'go', [
      replied('', [call('nope', {}, 'a'), call('echo', '{"text": ', 'b'), call('echo', '[1]', 'c')]),
    ]);
    expect(state.status).toBe('awaiting_llm');
    const tools = lastRequest(effects).messages.filter((m) => m.role === 'tool');
    expect(tools[0]?.content).toMatch(/^Error: unknown tool 'nope'\. Available tools: echo, write/);
    expect(tools[1]?.content).toMatch(/^Error: the arguments for echo are not valid JSON/);
    expect(tools[2]?.content).toBe('Error: the arguments for echo must be a JSON object.');
  });

  it('gives every call of a turn its own id when the model omits or repeats them', () => {
    const { effects } = drive(testConfig(), 'go', [
      replied('', [call('echo', {}, ''), call('echo', { text: 'x' }, 'dup'), call('echo', { text: 'y' }, 'dup')]),
    ]);
    const ids = ofType(effects, 'callTool').map((c) => c.call.id);
    expect(new Set(ids).size).toBe(3);
    expect(ids[1]).toBe('dup');
  });

  it("adds a tool's own model calls to the run's usage, once", () => {
    const config = testConfig();
    const { state } = drive(config, 'go', [replied('', [call('echo', {}, 'a'), call('echo', { text: 'b' }, 'b')])]);
    const usage = { inputTokens: 100, outputTokens: 7, llmCalls: 2 };
    const [next] = on(config, state, { type: 'toolCompleted', callId: 'a', output: 'x', usage });
    expect(next.usage).toEqual({ inputTokens: 110, outputTokens: 9, llmCalls: 3 });
    expect(on(config, next, { type: 'toolCompleted', callId: 'a', output: 'again', usage })).toEqual([next, []]);
  });

  it('accumulates usage per run', () => {
    const { state } = drive(testConfig(), 'go', [replied('', [call('echo', {}, 'a')]), done('a'), replied('done')]);
    expect(state.usage).toEqual({ inputTokens: 20, outputTokens: 4, llmCalls: 2 });
  });
});

describe('tool choice', () => {
  it('auto: a text-only reply ends the run with that answer', () => {
    const { state, effects } = drive(testConfig(), 'hello', [replied('Hi there!')]);
    expect(state).toMatchObject({ status: 'finished', finishReason: 'answered', answer: 'Hi there!' });
    expect(ofType(effects, 'finish')[0]?.result).toMatchObject({ finishReason: 'answered', answer: 'Hi there!' });
  });

  it('auto with finishOnText off keeps thinking until max steps (OpenManus behaviour)', () => {
    const config = testConfig({ finishOnText: false });
    const { state, trace } = drive(
      config,
      'hello',
      [replied('a'), replied('b'), replied('c')],
      stepWith({ maxSteps: 3 }),
    );
    expect(ofType(trace[1]?.effects ?? [], 'callLlm')).toHaveLength(1);
    expect(state).toMatchObject({ status: 'finished', finishReason: 'max_steps', step: 3, answer: 'c' });
  });

  it('required: a reply without a call is re-prompted once, then the run fails with a reason', () => {
    const config = testConfig({ toolChoice: 'required' });
    const { state: once, effects } = drive(config, 'go', [replied('thinking...')]);
    expect(once.status).toBe('awaiting_llm');
    expect(once.step).toBe(1);
    expect(lastRequest(effects).messages.at(-1)?.content).toMatch(/requires one\. Call one of the available tools/);
    expect(ofType(effects, 'emit').map((e) => e.observation.kind)).not.toContain('stepStarted');
    const [failed] = on(config, once, replied('still no call'));
    expect(failed).toMatchObject({ status: 'failed', finishReason: 'error' });
    expect(failed.error?.message).toMatch(/required.*twice without a tool call/);
  });

  it('required: a call after the re-prompt clears the nudge', () => {
    const config = testConfig({ toolChoice: 'required' });
    const { state, effects } = drive(config, 'go', [replied('hmm'), replied('', [call('echo', {}, 'a')]), done('a')]);
    expect(state.reprompted).toBe(false);
    expect(lastRequest(effects).messages.at(-1)?.content).toBe('What next?');
  });

  it('none: tool calls are dropped and reported', () => {
    const { state, effects } = drive(testConfig({ toolChoice: 'none' }), 'go', [
      replied('plain answer', [call('echo', {}, 'a')]),
    ]);
    expect(state).toMatchObject({ status: 'finished', answer: 'plain answer' });
    expect(state.messages.at(-1)).toEqual({ role: 'assistant', content: 'plain answer' });
    expect(ofType(effects, 'emit').map((e) => e.observation)).toContainEqual({ kind: 'toolCallsIgnored', count: 1 });
  });
});

describe('finishing', () => {
  it('a successful terminal call finishes as terminated, after the rest of the batch', () => {
    const config = testConfig();
    const { state } = drive(config, 'go', [
      replied('All done: 42', [call('terminate', { status: 'success' }, 't'), call('echo', {}, 'e')]),
      done('t', 'finished'),
    ]);
    expect(state.status).toBe('awaiting_tools');
    const [end, effects] = on(config, state, done('e'));
    expect(end).toMatchObject({ status: 'finished', finishReason: 'terminated', answer: 'All done: 42' });
    expect(ofType(effects, 'finish')).toHaveLength(1);
  });

  it('a failed terminal call does not finish', () => {
    const config = testConfig();
    const { state } = drive(config, 'go', [replied('', [call('terminate', { status: 'success' }, 't')])]);
    const [next] = on(config, state, { type: 'toolCompleted', callId: 't', output: 'Error: boom', isError: true });
    expect(next.status).toBe('awaiting_llm');
  });

  it('max steps finishes resumably; a new message continues the same memory with a fresh budget', () => {
    const config = testConfig();
    const twoSteps = stepWith({ maxSteps: 2 });
    const events = [
      replied('', [call('echo', {}, 'a')]),
      done('a'),
      replied('', [call('echo', { text: 'x' }, 'b')]),
      done('b'),
    ];
    const { state } = drive(config, 'go', events, twoSteps);
    expect(state).toMatchObject({ status: 'finished', finishReason: 'max_steps', step: 2 });
    expect(state.error?.message).toMatch(/step limit \(2\)/);
    const [again, effects] = on(config, state, { type: 'started', input: 'continue' }, twoSteps);
    expect(again).toMatchObject({ status: 'awaiting_llm', step: 1 });
    expect(again.finishReason).toBeUndefined();
    expect(contents(lastRequest(effects).messages).slice(1, 3)).toEqual(['user:go', 'assistant:']);
    expect(lastRequest(effects).messages.at(-2)?.content).toBe('continue');
  });

  it('finished states take no more events, except a new task', () => {
    const config = testConfig();
    const { state } = drive(config, 'hello', [replied('Hi')]);
    for (const event of [
      replied('x'),
      done('a'),
      { type: 'cancelled' as const },
      { type: 'llmFailed' as const, error: { code: 'LLM_SERVER' as const, message: 'x' } },
    ]) {
      expect(on(config, state, event)).toEqual([state, []]);
    }
  });

  it('starting while a run is in progress is refused', () => {
    const [state] = initialStep(testConfig(), 'go');
    expect(() => on(testConfig(), state, { type: 'started', input: 'other' })).toThrow(InvalidEventError);
  });

  it('cancel finishes with reason cancelled and keeps usage', () => {
    const config = testConfig();
    const { state } = drive(config, 'go', [replied('', [call('echo', {}, 'a')])]);
    const [cancelled, effects] = on(config, state, { type: 'cancelled', reason: 'user pressed Ctrl+C' });
    expect(cancelled).toMatchObject({
      status: 'finished',
      finishReason: 'cancelled',
      error: { code: 'CANCELLED', message: 'user pressed Ctrl+C' },
    });
    expect(ofType(effects, 'finish')[0]?.result.usage).toEqual(state.usage);
  });

  it('cancelling mid-turn answers the open calls, so the conversation can go on', () => {
    const config = testConfig();
    const { state } = drive(config, 'go', [
      replied('', [call('echo', {}, 'a'), call('echo', { text: 'b' }, 'b')]),
      done('a', 'A'),
    ]);
    const [cancelled] = on(config, state, { type: 'cancelled' });
    expect(cancelled.turn).toBeUndefined();
    expect(cancelled.messages.slice(-2)).toEqual([
      { role: 'tool', content: 'A', toolCallId: 'a', name: 'echo' },
      { role: 'tool', content: 'Error: cancelled before it finished.', toolCallId: 'b', name: 'echo' },
    ]);
    const [, effects] = on(config, cancelled, { type: 'started', input: 'try again' });
    const sent = lastRequest(effects).messages;
    expect(sent.filter((m) => m.role === 'tool').map((m) => (m.role === 'tool' ? m.toolCallId : ''))).toEqual([
      'a',
      'b',
    ]);
  });

  it('an LLM failure ends the run as failed with the reason', () => {
    const { state } = drive(testConfig(), 'go', [
      { type: 'llmFailed', error: { code: 'LLM_SERVER', message: 'server (HTTP 500): boom' } },
    ]);
    expect(state).toMatchObject({
      status: 'failed',
      finishReason: 'error',
      error: { code: 'LLM_SERVER', message: 'the model request failed: server (HTTP 500): boom' },
    });
  });
});

describe('stuck detection', () => {
  it('a reply repeated past the threshold adds the hint once to the next request only', () => {
    const config = testConfig({ finishOnText: false });
    const replies = [replied('same'), replied('same'), replied('same'), replied('different')];
    const { trace } = drive(config, 'go', replies, stepWith({ maxSteps: 10 }));
    const hints = trace.map((t) => lastRequestOrNone(t.effects)?.messages.at(-1)?.content ?? '');
    expect(hints[1]).toBe('What next?');
    expect(hints[2]).toBe('What next?');
    expect(hints[3]).toMatch(/^You seem to be repeating yourself \(the same reply 3 times\)[\s\S]*\n\nWhat next\?$/);
    expect(hints[3]?.match(/repeating yourself/g)).toHaveLength(1);
    expect(hints[4]).toBe('What next?');
    expect(ofType(trace[3]?.effects ?? [], 'emit').some((e) => e.observation.kind === 'hint')).toBe(true);
  });

  it('the same tool call with the same arguments is caught even when the text differs', () => {
    const events = ['a', 'b', 'c'].flatMap((t, i) => [
      replied(t, [call('echo', { text: 'same' }, `x${i}`)]),
      done(`x${i}`),
    ]);
    const strict = createStep([stepLimit(10), stuckDetection({ repeats: 2 }), terminalTools()]);
    const { effects } = drive(testConfig(), 'go', events, strict);
    expect(lastRequest(effects).messages.at(-1)?.content).toMatch(/the same echo call with the same arguments/);
  });
});

describe('approvals and people', () => {
  it('a call that needs approval waits, then runs when approved', () => {
    const config = testConfig();
    const { state, effects } = drive(config, 'go', [replied('', [call('deploy', {}, 'd'), call('echo', {}, 'e')])]);
    expect(state.status).toBe('awaiting_approval');
    expect(ofType(effects, 'requestApproval').map((e) => e.call.id)).toEqual(['d']);
    expect(ofType(effects, 'callTool').map((e) => e.call.id)).toEqual(['e']);
    const [approved, run] = on(config, state, { type: 'approvalGiven', callId: 'd' });
    expect(approved.status).toBe('awaiting_tools');
    expect(ofType(run, 'callTool').map((e) => e.call.id)).toEqual(['d']);
  });

  it('a denied call is answered with the reason and the step goes on', () => {
    const config = testConfig();
    const { state } = drive(config, 'go', [replied('', [call('deploy', {}, 'd')])]);
    const [next] = on(config, state, { type: 'approvalDenied', callId: 'd', reason: 'not on Fridays' });
    expect(next.status).toBe('awaiting_llm');
    expect(next.messages.at(-1)).toMatchObject({
      role: 'tool',
      content: 'Error: the user did not approve this call: not on Fridays',
    });
  });

  it('ask_human becomes an askHuman effect and the reply is the observation', () => {
    const config = testConfig();
    const { state, effects } = drive(config, 'go', [replied('', [call('ask_human', { inquire: 'Which city?' }, 'h')])]);
    expect(state.status).toBe('awaiting_human');
    expect(ofType(effects, 'askHuman')).toEqual([
      expect.objectContaining({ call: expect.objectContaining({ id: 'h' }), question: 'Which city?' }),
    ]);
    const [next] = on(config, state, { type: 'humanReplied', callId: 'h', answer: 'Kyoto' });
    expect(next.messages.at(-1)).toMatchObject({ role: 'tool', name: 'ask_human', content: 'Kyoto' });
  });
});

describe('resume', () => {
  it('re-emits what the state was waiting for, with the same effect ids', () => {
    const config = testConfig();
    const { state, effects } = drive(config, 'go', [
      replied('', [call('echo', {}, 'a'), call('echo', { text: 'b' }, 'b')]),
      done('a'),
    ]);
    const [same, again] = on(config, state, { type: 'resumed' });
    expect(same).toBe(state);
    const original = ofType(
      drive(config, 'go', [replied('', [call('echo', {}, 'a'), call('echo', { text: 'b' }, 'b')])]).effects,
      'callTool',
    );
    expect(ofType(again, 'callTool')).toEqual(original.filter((e) => e.call.id === 'b'));
    expect(effects).toEqual([]);
  });
});

describe('token budget', () => {
  it('a request over the budget is never sent: the run ends as token_limit with an explanation', () => {
    const { state, effects } = drive(testConfig(), 'x'.repeat(400), [], stepWith({ maxInputTokens: 30 }));
    expect(ofType(effects, 'callLlm')).toHaveLength(0);
    expect(state).toMatchObject({ status: 'finished', finishReason: 'token_limit' });
    expect(state.answer).toMatch(
      /needs \d+ input tokens \(estimated [^)]*\), more than the limit of 30\. It was not sent\./,
    );
    expect(state.messages.at(-1)?.role).toBe('assistant');
  });

  it('counts with the real tokenizer once loaded', async () => {
    await loadTokenizer('cl100k_base');
    const config = testConfig({ tokenizer: 'cl100k_base' });
    const { effects } = drive(config, 'hello world', [], stepWith({ maxInputTokens: 100_000 }));
    expect(ofType(effects, 'callLlm')).toHaveLength(1);
    expect(drive(config, 'hello world', [], stepWith({ maxInputTokens: 50 })).state.finishReason).toBe('token_limit');
  });
});

describe('images', () => {
  it('keeps the newest keepImages images; once there are twice as many the older ones go, all at once', () => {
    const image = (n: string) => ({ base64: n, mimeType: 'image/png' });
    const shots = (config: ReturnType<typeof testConfig>, count: number) =>
      drive(
        config,
        'go',
        Array.from({ length: count }, (_, i) => [
          replied('', [call('echo', { text: `${i}` }, `s${i + 1}`)]),
          { type: 'toolCompleted' as const, callId: `s${i + 1}`, output: `shot ${i + 1}`, image: image('AAAA') },
        ]).flat(),
        stepWith({ maxSteps: 10 }),
      );
    const withImages = (messages: readonly Message[]) =>
      messages.filter((m) => 'image' in m && m.image).map((m) => m.content);
    const config = testConfig();
    // Two images are within the high-water mark: the history sent before is not rewritten.
    expect(withImages(shots(config, 2).state.messages)).toEqual(['shot 1', 'shot 2']);
    const { state, effects } = shots(config, 3);
    expect(withImages(state.messages)).toEqual(['shot 3']);
    expect(withImages(lastRequest(effects).messages)).toEqual(['shot 3']);
    expect(ofType(effects, 'emit').map((e) => e.observation)).toContainEqual({
      kind: 'memoryTrimmed',
      dropped: 0,
      shrunk: 2,
    });
    expect(state.messages.find((m) => m.content === 'shot 1')).toEqual({
      role: 'tool',
      content: 'shot 1',
      toolCallId: 's1',
      name: 'echo',
    });
    const two = testConfig({ keepImages: 2 });
    expect(withImages(shots(two, 4).state.messages)).toEqual(['shot 1', 'shot 2', 'shot 3', 'shot 4']);
    expect(withImages(shots(two, 5).state.messages)).toEqual(['shot 4', 'shot 5']);
    // None kept: no image is ever sent.
    const none = shots(testConfig({ keepImages: 0 }), 1);
    expect(withImages(lastRequest(none.effects).messages)).toEqual([]);
  });
});

describe('superseded observations', () => {
  const page = (n: number) => ({
    type: 'toolCompleted' as const,
    callId: `p${n}`,
    output: `clicked ${n}\nPage state ${n}: a long list of elements`,
    brief: `clicked ${n}`,
  });
  const browse = (config: ReturnType<typeof testConfig>, pages: number) =>
    drive(
      config,
      'browse',
      Array.from({ length: pages }, (_, i) => [
        replied('', [call('echo', { text: `${i + 1}` }, `p${i + 1}`)]),
        page(i + 1),
      ]).flat(),
      stepWith({ maxSteps: 10 }),
    );
  const toolContents = (messages: readonly Message[]) =>
    messages.filter((m) => m.role === 'tool').map((m) => m.content);

  it('keeps the newest keepFullObservations of a tool in full; at twice as many the older ones shrink to their brief at once', () => {
    const full = (n: number) => `clicked ${n}\nPage state ${n}: a long list of elements`;
    // Four full observations are within the high-water mark of the default (2): nothing sent is rewritten.
    expect(toolContents(browse(testConfig(), 4).state.messages)).toEqual([1, 2, 3, 4].map(full));
    const { state, effects } = browse(testConfig(), 5);
    const expected = ['clicked 1', 'clicked 2', 'clicked 3', full(4), full(5)];
    expect(toolContents(state.messages)).toEqual(expected);
    expect(toolContents(lastRequest(effects).messages)).toEqual(expected);
    // A shrunk observation is a plain tool message: nothing left to shrink, no brief sent on.
    expect(state.messages.find((m) => m.content === 'clicked 1')).toEqual({
      role: 'tool',
      content: 'clicked 1',
      toolCallId: 'p1',
      name: 'echo',
    });
    expect(toolContents(browse(testConfig({ keepFullObservations: 1 }), 3).state.messages)).toEqual([
      'clicked 1',
      'clicked 2',
      full(3),
    ]);
  });

  it('with keepFullObservations 0 every observation that has a brief is sent as its brief, the newest too', () => {
    const { state, effects } = browse(testConfig({ keepFullObservations: 0 }), 3);
    expect(toolContents(state.messages)).toEqual(['clicked 1', 'clicked 2', 'clicked 3']);
    expect(toolContents(lastRequest(effects).messages)).toEqual(['clicked 1', 'clicked 2', 'clicked 3']);
    // Only what no request had carried was shortened: no jump to report.
    expect(ofType(effects, 'emit').some((e) => e.observation.kind === 'memoryTrimmed')).toBe(false);
  });

  it('counts per tool, and leaves observations without a brief alone', () => {
    const { state } = drive(testConfig({ keepFullObservations: 1 }), 'browse', [
      replied('', [call('echo', {}, 'a')]),
      { type: 'toolCompleted', callId: 'a', output: 'echo full a', brief: 'echo a' },
      replied('', [call('write', { path: 'x' }, 'b')]),
      { type: 'toolCompleted', callId: 'b', output: 'write full b', brief: 'write b' },
      replied('', [call('echo', {}, 'c')]),
      { type: 'toolCompleted', callId: 'c', output: 'plain c' },
    ]);
    expect(toolContents(state.messages)).toEqual(['echo full a', 'write full b', 'plain c']);
  });

  it('cuts the brief at maxObserve like the output', () => {
    const { state } = drive(testConfig({ maxObserve: 5 }), 'go', [
      replied('', [call('echo', {}, 'a')]),
      { type: 'toolCompleted', callId: 'a', output: 'x', brief: 'a long brief' },
    ]);
    const tool = state.messages.find((m) => m.role === 'tool');
    expect(tool && 'brief' in tool ? tool.brief : undefined).toMatch(/^a lon/);
    expect(tool && 'brief' in tool ? tool.brief?.length : 0).toBeGreaterThan(5);
  });
});

describe('memory window', () => {
  it('sends at most maxMessages on turn boundaries and always the task, with a note for what it leaves out', () => {
    const config = testConfig({ memory: { maxMessages: 4 } });
    const events = [1, 2, 3, 4].flatMap((i) => [replied(`${i}`, [call('echo', {}, `e${i}`)]), done(`e${i}`)]);
    const { effects } = drive(config, 'the task', events, stepWith({ maxSteps: 20 }));
    const history = lastRequest(effects).messages.slice(1, -1);
    expect(contents(history)).toEqual([
      'user:the task',
      'user:[6 earlier messages are left out of this request to keep it short.]',
      'assistant:4',
      'tool:ok',
    ]);
    expect(ofType(effects, 'emit').map((e) => e.observation)).toContainEqual({
      kind: 'memoryTrimmed',
      dropped: 2,
      shrunk: 0,
    });
  });
});

function lastRequestOrNone(effects: Parameters<typeof ofType>[0]) {
  return ofType(effects, 'callLlm')[0]?.request;
}

describe('correlation', () => {
  it('an answer must name the effect it answers: a redelivered reply to llm-1 is not taken as the answer to llm-2', () => {
    const config = testConfig();
    const first = { type: 'llmResponded' as const, effectId: 'llm-1', content: '', toolCalls: [call('echo', {}, 'a')] };
    const [s1, e1] = step(config, initialStep(config, 'go')[0], first);
    expect(ofType(e1, 'callTool').map((e) => e.id)).toEqual(['running-1-0']);
    const [s2, e2] = step(config, s1, { type: 'toolCompleted', effectId: 'running-1-0', output: 'A' });
    expect(ofType(e2, 'callLlm').map((e) => e.id)).toEqual(['llm-2']);
    expect(step(config, s2, first)).toEqual([s2, []]);
    expect(
      step(config, s2, { type: 'llmFailed', effectId: 'llm-1', error: { code: 'LLM_SERVER', message: 'late' } }),
    ).toEqual([s2, []]);
    expect(step(config, s2, { type: 'toolCompleted', effectId: 'running-1-0', output: 'again' })).toEqual([s2, []]);
    const [answered] = step(config, s2, { ...first, effectId: 'llm-2', content: 'done', toolCalls: [] });
    expect(answered).toMatchObject({ status: 'finished', answer: 'done' });
  });

  it('an answer of the wrong kind for an effect id changes nothing', () => {
    const config = testConfig();
    const { state } = drive(config, 'go', [replied('', [call('deploy', {}, 'd')])]);
    expect(step(config, state, { type: 'toolCompleted', effectId: 'approval-1-0', output: 'x' })).toEqual([state, []]);
    expect(step(config, state, { type: 'humanReplied', effectId: 'approval-1-0', answer: 'x' })).toEqual([state, []]);
    const [approved] = step(config, state, { type: 'approvalGiven', effectId: 'approval-1-0' });
    expect(step(config, approved, { type: 'approvalGiven', effectId: 'approval-1-0' })).toEqual([approved, []]);
  });

  it('a failed model call counts in usage', () => {
    const { state } = drive(testConfig(), 'go', [
      { type: 'llmFailed', error: { code: 'LLM_SERVER', message: 'boom' } },
    ]);
    expect(state.usage.llmCalls).toBe(1);
  });

  it('the run id comes from the shell: set by started or resumed, never made by the reducer', () => {
    const config = testConfig();
    const [started] = step(config, initialState(), { type: 'started', input: 'x', runId: 'r-1' });
    expect(started.runId).toBe('r-1');
    const [kept] = step(config, started, { type: 'resumed', runId: 'other' });
    expect(kept.runId).toBe('r-1');
    const [anonymous] = initialStep(config, 'x');
    expect(anonymous.runId).toBeUndefined();
    expect(step(config, anonymous, { type: 'resumed', runId: 'r-2' })[0].runId).toBe('r-2');
  });
});

describe('live tool lists', () => {
  it('toolsChanged keeps the list the model saw: a gone tool stays listed, its calls answered as unavailable; a new one goes at the end', () => {
    const config = testConfig();
    const { state } = drive(config, 'go', []);
    const extra = { name: 'extra', description: 'Added later', parameters: { type: 'object' } };
    const next = [...config.tools.filter((t) => t.name !== 'write'), extra];
    const [changed, none] = step(config, state, { type: 'toolsChanged', tools: next });
    expect(none).toEqual([]);
    expect(changed.unavailableTools).toEqual(['write']);
    const [, effects] = on(config, changed, replied('', [call('write', { path: '/x' }, 'w')]));
    const request = lastRequest(effects);
    // Same order as before (tools come first in a request: a prompt cache keeps serving them).
    expect(request.tools.map((t) => t.name)).toEqual(['echo', 'write', 'terminate', 'deploy', 'ask_human', 'extra']);
    expect(request.messages.find((m) => m.role === 'tool')?.content).toMatch(
      /^Error: the tool 'write' is not available any more in this run/,
    );
    // A tool that comes back is available again, in its place.
    const [back] = step(config, changed, { type: 'toolsChanged', tools: [...config.tools, extra] });
    expect(back.unavailableTools).toBeUndefined();
    expect(back.tools?.map((t) => t.name)).toEqual(['echo', 'write', 'terminate', 'deploy', 'ask_human', 'extra']);
  });

  it('toolsChanged with exact takes the list as given: a call to a tool that has gone lists those left', () => {
    const config = testConfig();
    const { state } = drive(config, 'go', []);
    const left = config.tools.filter((t) => t.name !== 'write');
    const [changed] = step(config, state, { type: 'toolsChanged', tools: left, exact: true });
    const [, effects] = on(config, changed, replied('', [call('write', { path: '/x' }, 'w')]));
    const request = lastRequest(effects);
    expect(request.tools.map((t) => t.name)).toEqual(['echo', 'terminate', 'deploy', 'ask_human']);
    expect(request.messages.find((m) => m.role === 'tool')?.content).toBe(
      "Error: unknown tool 'write'. Available tools: echo, terminate, deploy, ask_human.",
    );
  });
});

describe('a tool paused on a person', () => {
  const config = testConfig();
  const form = { message: 'How many?', schema: { type: 'object' } };
  const paused = () => {
    const first = { type: 'llmResponded' as const, effectId: 'llm-1', content: '', toolCalls: [call('echo', {}, 'a')] };
    const [running] = step(config, initialStep(config, 'go')[0], first);
    const echo = { id: 'a', name: 'echo', arguments: '{}' };
    const waiting = [{ kind: 'human' as const, effectId: 'q1', question: 'How many?', call: echo, form }];
    return step(config, running, { type: 'toolSuspended', effectId: 'running-1-0', progress: { at: 1 }, waiting })[0];
  };

  it('keeps the answer in the state, so a run resumed from it hands the answer to the tool', () => {
    const waitingState = paused();
    expect(waitingState.status).toBe('awaiting_human');
    const answer = { type: 'humanReplied' as const, effectId: 'running-1-0/q1', answer: '2' };
    const [answered, effects] = step(config, waitingState, answer);
    const redo = { type: 'callTool', id: 'running-1-0', progress: { at: 1 }, answer: { ...answer, effectId: 'q1' } };
    expect(ofType(effects, 'callTool')).toEqual([expect.objectContaining(redo)]);
    // A host that saves the answered state and resumes it later (a server, a durable engine) gets the same call.
    const [, again] = step(config, JSON.parse(JSON.stringify(answered)), { type: 'resumed' });
    expect(ofType(again, 'callTool')).toEqual([expect.objectContaining(redo)]);
  });

  it('spends the answer when the tool pauses again, and drops it once the call answers', () => {
    const [answered] = step(config, paused(), { type: 'humanReplied', effectId: 'running-1-0/q1', answer: '2' });
    const echo = { id: 'a', name: 'echo', arguments: '{}' };
    const waiting = [{ kind: 'human' as const, effectId: 'q2', question: 'And when?', call: echo }];
    const [again] = step(config, answered, { type: 'toolSuspended', effectId: 'running-1-0', progress: 2, waiting });
    expect(again.turn?.calls[0]?.answer).toBeUndefined();
    const [done] = step(config, answered, { type: 'toolCompleted', effectId: 'running-1-0', output: 'ok' });
    expect(JSON.stringify(done)).not.toContain('"answer":{');
  });
});
