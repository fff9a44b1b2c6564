import { describe, expect, it } from 'vitest';
import type { AgentConfig } from '../src/kernel/agent.js';
import type { ContextProvider } from '../src/kernel/context.js';
import type { AnyEffect } from '../src/kernel/effects.js';
import { lastAnswer, type Message } from '../src/kernel/messages.js';
import { defaultPolicies, type Policy, type Stop } from '../src/kernel/policies.js';
import { createStep, InvalidEventError, initialState, initialStep, step } from '../src/kernel/reducer.js';
import type { AgentState, PendingCall } from '../src/kernel/state.js';
import { requestTokens } from '../src/kernel/tokens.js';
import type { ToolSpec } from '../src/kernel/tool.js';
import {
  call,
  correlate,
  done,
  drive,
  ofType,
  on,
  replied,
  type Shorthand,
  specs,
  start,
  stepWith,
  testConfig,
} from './helpers.js';

const requestOf = (effects: readonly AnyEffect[]) => {
  const [llm] = ofType(effects, 'callLlm');
  if (!llm) throw new Error('expected a callLlm effect');
  return llm.request;
};
const observations = (effects: readonly AnyEffect[]) => ofType(effects, 'emit').map((e) => e.observation);
const kinds = (effects: readonly AnyEffect[]) => effects.map((e) => e.type);
const toolMessages = (messages: readonly Message[]) => messages.filter((m) => m.role === 'tool');

/** A step with the default policies plus `extra`, driven with the helpers' shorthand events. */
function driveWith(config: AgentConfig, extra: readonly Policy[], input: string, events: Shorthand[]) {
  const withExtra = createStep([...defaultPolicies({ maxSteps: 5 }), ...extra]);
  let [state, effects] = withExtra(config, initialState(), { type: 'started', input });
  for (const event of events) [state, effects] = withExtra(config, state, correlate(state, event));
  return { state, effects };
}

/** A policy that records the calls of every step it sees end (tests only: policies are otherwise pure). */
function spy() {
  const steps: PendingCall[][] = [];
  const policy: Policy = {
    name: 'spy',
    afterStep: (_context, calls) => {
      steps.push([...calls]);
      return undefined;
    },
  };
  return { policy, steps };
}

const stopAfterStep = (stop: Stop): Policy => ({ name: 'stopper', afterStep: () => stop });

describe('the effects of each step, exactly', () => {
  it('the first step announces itself and asks the model; nothing else', () => {
    const [, effects] = start(testConfig(), 'go');
    expect(kinds(effects)).toEqual(['emit', 'callLlm']);
    expect(observations(effects)).toEqual([{ kind: 'stepStarted', step: 1, maxSteps: 5 }]);
    expect(ofType(effects, 'callLlm')[0]?.id).toBe('llm-1');
  });

  it('a step after tool results is announced the same way, with the next request id', () => {
    const { effects } = drive(testConfig(), 'go', [replied('', [call('echo', {}, 'a')]), done('a')]);
    expect(kinds(effects)).toEqual(['emit', 'callLlm']);
    expect(observations(effects)).toEqual([{ kind: 'stepStarted', step: 2, maxSteps: 5 }]);
    expect(ofType(effects, 'callLlm')[0]?.id).toBe('llm-2');
  });

  it('a text answer emits only the finish, with no error', () => {
    const { effects } = drive(testConfig(), 'hello', [replied('Hi!')]);
    expect(effects).toEqual([
      {
        type: 'finish',
        result: { finishReason: 'answered', answer: 'Hi!', usage: { inputTokens: 10, outputTokens: 2, llmCalls: 1 } },
      },
    ]);
    expect(ofType(effects, 'finish')[0]?.result).not.toHaveProperty('error');
  });

  it('tool_choice none: a reply without calls reports no ignored calls', () => {
    const { effects } = drive(testConfig({ toolChoice: 'none' }), 'hello', [replied('Hi!')]);
    expect(kinds(effects)).toEqual(['finish']);
    const looping = drive(testConfig({ toolChoice: 'none', finishOnText: false }), 'hello', [replied('Hi!')]);
    expect(observations(looping.effects)).toEqual([{ kind: 'stepStarted', step: 2, maxSteps: 5 }]);
  });

  it('tool_choice none: ignored calls are counted before the next step starts', () => {
    const config = testConfig({ toolChoice: 'none', finishOnText: false });
    const { state, effects } = drive(config, 'go', [replied('hm', [call('echo', {}, 'a'), call('write', {}, 'b')])]);
    expect(observations(effects)).toEqual([
      { kind: 'toolCallsIgnored', count: 2 },
      { kind: 'stepStarted', step: 2, maxSteps: 5 },
    ]);
    expect(state.turn).toBeUndefined();
  });

  it('calls that all run ask for nothing but the calls, with exact effects', () => {
    const timed: ToolSpec = { name: 'slow', description: 'Slow', parameters: {}, timeoutMs: 5_000 };
    const config = testConfig({ tools: [specs.echo, specs.write, timed] });
    const calls = [call('echo', { text: 'a' }, 'a'), call('write', { path: '/x' }, 'b'), call('slow', {}, 'c')];
    const { effects } = drive(config, 'go', [replied('', calls)]);
    expect(effects).toStrictEqual([
      { type: 'callTool', id: 'running-1-0', call: calls[0], args: { text: 'a' }, parallelSafe: true },
      { type: 'callTool', id: 'running-1-1', call: calls[1], args: { path: '/x' }, parallelSafe: false },
      { type: 'callTool', id: 'running-1-2', call: calls[2], args: {}, parallelSafe: false, timeoutMs: 5_000 },
    ]);
  });

  it('a resumed run that waits for the model asks again with the same id and request, announcing nothing', () => {
    const config = testConfig();
    const [state, effects] = initialStep(config, 'go');
    const [same, again] = step(config, state, { type: 'resumed' });
    expect(same).toBe(state);
    expect(again).toEqual(ofType(effects, 'callLlm'));
  });

  it('memoryTrimmed says how many messages were left out, only when some were', () => {
    const config = testConfig({ memory: { maxMessages: 3 } });
    const events = [replied('', [call('echo', {}, 'a')]), done('a'), replied('', [call('echo', {}, 'b')]), done('b')];
    const { trace } = drive(config, 'go', events, stepWith({ maxSteps: 10 }));
    expect(observations(trace[2]?.effects ?? [])).toEqual([{ kind: 'stepStarted', step: 2, maxSteps: 10 }]);
    expect(observations(trace[4]?.effects ?? [])).toEqual([
      { kind: 'stepStarted', step: 3, maxSteps: 10 },
      { kind: 'memoryTrimmed', dropped: 2, shrunk: 0 },
    ]);
  });
});

describe('token budget boundary', () => {
  const task = 'count to three, slowly';
  const needed = requestTokens(requestOf(initialStep(testConfig(), task)[1]), 'estimate');
  const budget = (maxInputTokens: number) => stepWith({ maxInputTokens });

  it('a request of exactly maxInputTokens is sent', () => {
    const [state, effects] = start(testConfig(), task, budget(needed));
    expect(state.status).toBe('awaiting_llm');
    expect(kinds(effects)).toEqual(['emit', 'callLlm']);
    expect(observations(effects)).toEqual([{ kind: 'stepStarted', step: 1, maxSteps: 5 }]);
  });

  it('one token over, the run stops with the numbers, as an answer the user reads', () => {
    const [state, effects] = start(testConfig(), task, budget(needed - 1));
    const say =
      `Stopped before step 1: the request needs ${needed} input tokens ` +
      '(estimated at 4 characters a token: the agent counts by estimate), ' +
      `more than the limit of ${needed - 1}. It was not sent.`;
    expect(state).toMatchObject({
      status: 'finished',
      finishReason: 'token_limit',
      answer: say,
      error: { code: 'TOKEN_LIMIT', message: say },
    });
    expect(state.messages).toEqual([
      { role: 'user', content: task },
      { role: 'assistant', content: say },
    ]);
    expect(effects).toEqual([
      {
        type: 'finish',
        result: {
          finishReason: 'token_limit',
          answer: say,
          error: { code: 'TOKEN_LIMIT', message: say },
          usage: { inputTokens: 0, outputTokens: 0, llmCalls: 0 },
        },
      },
    ]);
  });

  it('a stop decided on an estimate (the tokenizer not loaded) says so, in the answer and the error', () => {
    const [state] = start(testConfig({ tokenizer: 'o200k_base' }), task, budget(needed - 1));
    expect(state.finishReason).toBe('token_limit');
    const note = '(estimated at 4 characters a token: the o200k_base tokenizer was not loaded)';
    expect(state.error?.message).toContain(`the request needs ${needed} input tokens ${note}, more than the limit`);
    expect(state.error?.code).toBe('TOKEN_LIMIT');
    expect(state.answer).toBe(state.error?.message);
    expect(state.messages.at(-1)).toEqual({ role: 'assistant', content: state.error?.message });
  });

  it('with a tokenizer that is not loaded, the estimate is said to be one', () => {
    const [, effects] = start(testConfig({ tokenizer: 'o200k_base' }), task, budget(100_000));
    expect(observations(effects)).toEqual([
      { kind: 'stepStarted', step: 1, maxSteps: 5 },
      { kind: 'tokensEstimated', tokenizer: 'o200k_base' },
    ]);
  });
});

describe('observations and their limit', () => {
  const observed = (config: AgentConfig, output: string) =>
    toolMessages(drive(config, 'go', [replied('', [call('echo', {}, 'a')]), done('a', output)]).state.messages)[0]
      ?.content;

  it('an output of exactly maxObserve characters is kept whole', () => {
    expect(observed(testConfig({ maxObserve: 10 }), '0123456789')).toBe('0123456789');
  });

  it('one character more is cut, saying how much was left out', () => {
    expect(observed(testConfig({ maxObserve: 10 }), '0123456789X')).toBe(
      '0123456789\n…[observation truncated: 1 more characters]',
    );
  });

  it('without maxObserve nothing is cut', () => {
    const long = 'y'.repeat(300_000);
    expect(observed(testConfig(), long)).toBe(long);
  });
});

describe('admitting calls', () => {
  it('empty or blank arguments are an empty object', () => {
    const { effects } = drive(testConfig(), 'go', [replied('', [call('echo', '', 'a'), call('write', '  \n', 'b')])]);
    expect(ofType(effects, 'callTool').map((e) => [e.call.id, e.args])).toEqual([
      ['a', {}],
      ['b', {}],
    ]);
  });

  it('JSON that is not an object is refused with the same message, and nothing runs', () => {
    const { policy, steps } = spy();
    const bad = ['null', '42', '"x"', '[1,2]', 'true'];
    const { state, effects } = driveWith(testConfig(), [policy], 'go', [
      replied(
        '',
        bad.map((args, i) => call('echo', args, `b${i}`)),
      ),
    ]);
    expect(ofType(effects, 'callTool')).toEqual([]);
    expect(state.status).toBe('awaiting_llm');
    expect(toolMessages(state.messages).map((m) => m.content)).toEqual(
      bad.map(() => 'Error: the arguments for echo must be a JSON object.'),
    );
    expect(steps[0]?.map((c) => [c.phase, c.isError, c.args])).toEqual([
      ['done', true, null],
      ['done', true, 42],
      ['done', true, 'x'],
      ['done', true, [1, 2]],
      ['done', true, true],
    ]);
  });

  it('every refusal is an error result, whatever its reason', () => {
    const { policy, steps } = spy();
    const refuseWrite: Policy = {
      name: 'noWrite',
      admitCall: (_context, c) => (c.name === 'write' ? 'Error: not here.' : undefined),
    };
    const config = testConfig({ maxToolArgsChars: 30 });
    driveWith(config, [refuseWrite, policy], 'go', [
      replied('', [
        call('nope', {}, 'u'),
        call('echo', '{"text": ', 'j'),
        call('echo', { text: 'x'.repeat(40) }, 'big'),
        call('write', { path: '/x' }, 'w'),
      ]),
    ]);
    expect(steps[0]?.map((c) => [c.call.id, c.phase, c.isError])).toEqual([
      ['u', 'done', true],
      ['j', 'done', true],
      ['big', 'done', true],
      ['w', 'done', true],
    ]);
    expect(steps[0]?.[3]?.args).toEqual({ path: '/x' });
  });

  it('a refused terminate call does not end the run', () => {
    const refuseAll: Policy = { name: 'refuseAll', admitCall: () => 'Error: refused.' };
    for (const [args, extra, config] of [
      ['null', [], testConfig()],
      ['{"status":', [], testConfig()],
      [JSON.stringify({ status: 'success', pad: 'x'.repeat(50) }), [], testConfig({ maxToolArgsChars: 40 })],
      ['{"status":"success"}', [refuseAll], testConfig()],
    ] as const) {
      const { state } = driveWith(config, extra, 'go', [replied('bye', [call('terminate', args, 't')])]);
      expect(state.status, args).toBe('awaiting_llm');
    }
  });

  it('a tool name of 1000 characters is kept; a longer one is cut to 100 and an ellipsis', () => {
    const unknown = (name: string) =>
      toolMessages(drive(testConfig(), 'go', [replied('', [call(name, {}, 'a')])]).state.messages)[0]?.content;
    const long = 'n'.repeat(1_000);
    expect(unknown(long)).toBe(
      `Error: unknown tool '${long}'. Available tools: echo, write, terminate, deploy, ask_human.`,
    );
    expect(unknown(`${long}m`)).toBe(
      `Error: unknown tool '${'n'.repeat(100)}…'. Available tools: echo, write, terminate, deploy, ask_human.`,
    );
  });

  it('an unknown tool with no tools at all says none', () => {
    const { state } = drive(testConfig({ tools: [] }), 'go', [replied('', [call('echo', {}, 'a')])]);
    expect(toolMessages(state.messages)[0]?.content).toBe("Error: unknown tool 'echo'. Available tools: none.");
  });

  it('calls without an id, or with one already used in the turn, get call_<request>_<index>', () => {
    const { effects } = drive(testConfig(), 'go', [
      replied('', [call('echo', {}, ''), call('echo', { text: 'x' }, 'dup'), call('echo', { text: 'y' }, 'dup')]),
    ]);
    expect(ofType(effects, 'callTool').map((c) => c.call.id)).toEqual(['call_1_0', 'dup', 'call_1_2']);
  });
});

describe('replies without tool calls', () => {
  it('a blank reply does not finish the run, even with finishOnText', () => {
    const { state, effects } = drive(testConfig(), 'go', [replied('  \n\t ')]);
    expect(state).toMatchObject({ status: 'awaiting_llm', step: 2 });
    expect(observations(effects)).toEqual([{ kind: 'stepStarted', step: 2, maxSteps: 5 }]);
  });

  it('required: the re-prompt is the next request id within the same step', () => {
    const config = testConfig({ toolChoice: 'required' });
    const { state, effects } = drive(config, 'go', [replied('thinking')]);
    expect(state).toMatchObject({ status: 'awaiting_llm', step: 1, requestSeq: 2, reprompted: true });
    expect(kinds(effects)).toEqual(['callLlm']);
    expect(ofType(effects, 'callLlm')[0]?.id).toBe('llm-2');
    const late = { type: 'llmResponded' as const, effectId: 'llm-1', content: 'x', toolCalls: [] };
    expect(step(config, state, late)).toEqual([state, []]);
  });

  it('required: the second reply without a call fails the run with that reply as the answer', () => {
    const config = testConfig({ toolChoice: 'required' });
    const { state, effects } = drive(config, 'go', [replied('thinking'), replied('still thinking')]);
    expect(state).toMatchObject({
      status: 'failed',
      finishReason: 'error',
      answer: 'still thinking',
      error: {
        code: 'NO_TOOL_CALL',
        message: 'tool_choice is "required" but the model answered twice without a tool call',
      },
    });
    expect(kinds(effects)).toEqual(['finish']);
  });
});

describe('the answer of a run', () => {
  it('a run stopped after tool results answers with what the assistant said before them', () => {
    const events = [replied('Working on it.', [call('echo', {}, 'a')]), done('a', 'result')];
    const { state } = drive(testConfig(), 'go', events, stepWith({ maxSteps: 1 }));
    expect(state).toMatchObject({ finishReason: 'max_steps', answer: 'Working on it.' });
  });

  it('a blank reply after an answer leaves the answer', () => {
    const events = [replied('The answer is 4.'), replied('   ')];
    const { state } = drive(testConfig({ finishOnText: false }), 'go', events, stepWith({ maxSteps: 2 }));
    expect(state).toMatchObject({ finishReason: 'max_steps', answer: 'The answer is 4.' });
  });

  it("a later task that has said nothing yet does not answer with the previous task's answer", () => {
    const config = testConfig();
    const oneStep = stepWith({ maxSteps: 1 });
    const { state: first } = drive(config, 'first', [replied('First answer.')], oneStep);
    const [second] = on(config, first, { type: 'started', input: 'second' }, oneStep);
    const [calling] = on(config, second, replied('', [call('echo', {}, 'a')]), oneStep);
    const [stopped] = on(config, calling, done('a'), oneStep);
    expect(stopped).toMatchObject({ finishReason: 'max_steps', answer: '' });
    const [cancelled] = on(config, calling, { type: 'cancelled' }, oneStep);
    expect(cancelled.answer).toBe('');
  });

  it('a failed model call answers with nothing and counts one more call, tokens unchanged', () => {
    const { state, effects } = drive(testConfig(), 'go', [
      replied('Let me look.', [call('echo', {}, 'a')]),
      done('a'),
      { type: 'llmFailed', error: { code: 'LLM_SERVER', message: 'HTTP 500' } },
    ]);
    const usage = { inputTokens: 10, outputTokens: 2, llmCalls: 2 };
    expect(state.usage).toEqual(usage);
    expect(effects).toEqual([
      {
        type: 'finish',
        result: {
          finishReason: 'error',
          answer: '',
          usage,
          error: { code: 'LLM_SERVER', message: 'the model request failed: HTTP 500' },
        },
      },
    ]);
  });

  it('lastAnswer: the newest non-blank assistant text of the current task', () => {
    const user = (content: string): Message => ({ role: 'user', content });
    const assistant = (content: string): Message => ({ role: 'assistant', content });
    const tool: Message = { role: 'tool', content: 'out', toolCallId: 'a', name: 'echo' };
    expect(lastAnswer([])).toBe('');
    expect(lastAnswer([assistant('only')])).toBe('only');
    expect(lastAnswer([user('q'), assistant('a1'), tool, assistant(' \n')])).toBe('a1');
    expect(lastAnswer([user('q'), assistant('a1'), assistant('a2'), tool])).toBe('a2');
    expect(lastAnswer([user('q'), assistant('a1'), user('next')])).toBe('');
    expect(lastAnswer([user('q'), tool])).toBe('');
    expect(lastAnswer([assistant('old'), user('new'), tool])).toBe('');
  });
});

describe('how a run ends', () => {
  it('terminated and answered keep no error, other reasons keep theirs', () => {
    const why = { code: 'POLICY_STOP', message: 'why' } as const;
    const cases: [Stop, Record<string, unknown>][] = [
      [
        { reason: 'terminated', error: why },
        { finishReason: 'terminated', status: 'finished' },
      ],
      [
        { reason: 'answered', error: why },
        { finishReason: 'answered', status: 'finished' },
      ],
      [
        { reason: 'max_steps', error: why },
        { finishReason: 'max_steps', status: 'finished', error: why },
      ],
      [
        { reason: 'error', error: why },
        { finishReason: 'error', status: 'failed', error: why },
      ],
    ];
    for (const [stop, expected] of cases) {
      const { state, effects } = driveWith(testConfig(), [stopAfterStep(stop)], 'go', [
        replied('Said.', [call('echo', {}, 'a')]),
        done('a'),
      ]);
      expect(state, stop.reason).toMatchObject({ ...expected, answer: 'Said.' });
      if (!('error' in expected)) {
        expect(state, stop.reason).not.toHaveProperty('error');
        expect(ofType(effects, 'finish')[0]?.result, stop.reason).not.toHaveProperty('error');
      } else {
        expect(ofType(effects, 'finish')[0]?.result.error).toEqual(why);
      }
    }
  });

  it('a stop with an answer of its own answers with it', () => {
    const { state } = driveWith(testConfig(), [stopAfterStep({ reason: 'terminated', answer: 'Mine.' })], 'go', [
      replied('Said.', [call('echo', {}, 'a')]),
      done('a'),
    ]);
    expect(state.answer).toBe('Mine.');
  });

  it('a stop that says something records it as the last assistant message, the answer and the error', () => {
    const { state } = driveWith(testConfig(), [stopAfterStep({ reason: 'max_steps', say: 'Out of budget.' })], 'go', [
      replied('Said.', [call('echo', {}, 'a')]),
      done('a'),
    ]);
    expect(state).toMatchObject({
      answer: 'Out of budget.',
      error: { code: 'POLICY_STOP', message: 'Out of budget.' },
    });
    expect(state.messages.at(-1)).toEqual({ role: 'assistant', content: 'Out of budget.' });
  });

  it('a terminal call ends the run with its output when the assistant said nothing', () => {
    const { state } = drive(testConfig(), 'go', [
      replied('', [call('terminate', { status: 'success' }, 't')]),
      done('t', 'The interaction has been completed with status: success'),
    ]);
    expect(state).toMatchObject({
      finishReason: 'terminated',
      answer: 'The interaction has been completed with status: success',
    });
    expect(state).not.toHaveProperty('error');
  });

  it('a cancel without a reason has no error', () => {
    const { state } = drive(testConfig(), 'go', [{ type: 'cancelled' }]);
    expect(state).toMatchObject({ status: 'finished', finishReason: 'cancelled', answer: '' });
    expect(state).not.toHaveProperty('error');
  });

  it('a fault fails the run with its reason', () => {
    const { state, effects } = drive(testConfig(), 'go', [
      { type: 'faulted', error: { code: 'INTERNAL', message: 'no performer for callLlm' } },
    ]);
    expect(state).toMatchObject({
      status: 'failed',
      finishReason: 'error',
      error: { code: 'INTERNAL', message: 'no performer for callLlm' },
    });
    expect(kinds(effects)).toEqual(['finish']);
  });

  it('resuming a finished run re-emits its finish, and nothing else', () => {
    const config = testConfig();
    const { state: answered } = drive(config, 'hello', [replied('Hi')]);
    const [same, effects] = step(config, answered, { type: 'resumed' });
    expect(same).toBe(answered);
    expect(effects).toEqual([
      {
        type: 'finish',
        result: { finishReason: 'answered', answer: 'Hi', usage: { inputTokens: 10, outputTokens: 2, llmCalls: 1 } },
      },
    ]);
    const { state: failed } = drive(config, 'hello', [
      { type: 'llmFailed', error: { code: 'LLM_SERVER', message: 'down' } },
    ]);
    expect(step(config, failed, { type: 'resumed' })[1]).toEqual([
      {
        type: 'finish',
        result: {
          finishReason: 'error',
          answer: '',
          usage: { inputTokens: 0, outputTokens: 0, llmCalls: 1 },
          error: { code: 'LLM_SERVER', message: 'the model request failed: down' },
        },
      },
    ]);
  });
});

describe('starting tasks', () => {
  it('a task cannot start while one runs, and the error says why', () => {
    const config = testConfig();
    const { state } = drive(config, 'go', [replied('', [call('echo', {}, 'a')])]);
    let thrown: unknown;
    try {
      on(config, state, { type: 'started', input: 'other' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidEventError);
    expect(thrown).toMatchObject({
      name: 'InvalidEventError',
      message: 'cannot start a new task while the run is awaiting_tools',
    });
  });

  it('a failed run takes a new task', () => {
    const config = testConfig();
    const { state } = drive(config, 'go', [{ type: 'llmFailed', error: { code: 'LLM_SERVER', message: 'down' } }]);
    const [again] = on(config, state, { type: 'started', input: 'try again' });
    expect(again).toMatchObject({ status: 'awaiting_llm', step: 1, taskIndex: 1 });
    expect(again).not.toHaveProperty('error');
    expect(again).not.toHaveProperty('answer');
    expect(again).not.toHaveProperty('finishReason');
  });

  it('a task with an image keeps it on the task message and sends it', () => {
    const image = { base64: 'AAAA', mimeType: 'image/png' };
    const [state, effects] = initialStep(testConfig(), 'what is this?', image);
    expect(state.messages).toEqual([{ role: 'user', content: 'what is this?', image }]);
    expect(requestOf(effects).messages[1]).toEqual({ role: 'user', content: 'what is this?', image });
  });

  it("a new task's image counts with the older ones; past twice keepImages only the newest keep theirs", () => {
    const config = testConfig();
    const first = { base64: 'AAAA', mimeType: 'image/png' };
    const second = { base64: 'BBBB', mimeType: 'image/jpeg' };
    const third = { base64: 'CCCC', mimeType: 'image/png' };
    const imaged = (state: AgentState) => state.messages.filter((m) => 'image' in m && m.image).map((m) => m.content);
    const [start] = initialStep(config, 'one', first);
    const [answered] = on(config, start, replied('A cat.'));
    const [plain] = on(config, answered, { type: 'started', input: 'and now?' });
    expect(plain.messages[0]).toEqual({ role: 'user', content: 'one', image: first });
    const [answeredAgain] = on(config, plain, replied('Still a cat.'));
    const [two] = step(config, answeredAgain, { type: 'started', input: 'two', image: second });
    expect(imaged(two)).toEqual(['one', 'two']);
    const [answeredTwo] = on(config, two, replied('A dog.'));
    const [three] = step(config, answeredTwo, { type: 'started', input: 'three', image: third });
    expect(imaged(three)).toEqual(['three']);
    expect(three.messages[0]).toEqual({ role: 'user', content: 'one' });
  });

  it('tools that changed after a run finished are the next task’s tools', () => {
    const config = testConfig();
    const { state } = drive(config, 'hello', [replied('Hi')]);
    const only = [specs.echo];
    const [changed, none] = step(config, state, { type: 'toolsChanged', tools: only, exact: true });
    expect(none).toEqual([]);
    expect(changed).toMatchObject({ status: 'finished', tools: only });
    const [, effects] = on(config, changed, { type: 'started', input: 'again' });
    expect(requestOf(effects).tools).toBe(only);
  });
});

describe('approvals, people and waiting', () => {
  const confirm: ToolSpec = {
    name: 'confirm',
    description: 'Ask a person, once approved',
    parameters: {},
    needsApproval: true,
    human: { questionArg: 'q' },
  };
  const shipIt: ToolSpec = {
    name: 'ship_it',
    description: 'Ship and finish',
    parameters: {},
    needsApproval: true,
    terminal: true,
  };

  it('an approved call of a tool answered by a person asks that person', () => {
    const config = testConfig({ tools: [...Object.values(specs), confirm] });
    const { state } = drive(config, 'go', [replied('', [call('confirm', { q: 'Ship it?' }, 'c')])]);
    expect(state.status).toBe('awaiting_approval');
    const [approved, effects] = on(config, state, { type: 'approvalGiven', callId: 'c' });
    expect(approved.status).toBe('awaiting_human');
    expect(effects).toEqual([
      {
        type: 'askHuman',
        id: 'human-1-0',
        call: { id: 'c', name: 'confirm', arguments: '{"q":"Ship it?"}' },
        question: 'Ship it?',
        args: { q: 'Ship it?' },
      },
    ]);
  });

  it('a denial without a reason says so in one sentence, and is an error: a denied terminal call does not end the run', () => {
    const config = testConfig({ tools: [...Object.values(specs), shipIt] });
    const { state } = drive(config, 'go', [replied('Shipping.', [call('ship_it', {}, 's')])]);
    const [denied] = on(config, state, { type: 'approvalDenied', callId: 's' });
    expect(denied.status).toBe('awaiting_llm');
    expect(toolMessages(denied.messages)[0]?.content).toBe('Error: the user did not approve this call.');
    const [approved] = on(config, state, { type: 'approvalGiven', callId: 's' });
    const [shipped] = on(config, approved, done('s', 'shipped'));
    expect(shipped).toMatchObject({ status: 'finished', finishReason: 'terminated', answer: 'Shipping.' });
  });

  it('answers for nothing the run waits for change nothing', () => {
    const config = testConfig();
    const { state } = drive(config, 'go', [
      replied('', [call('deploy', {}, 'd'), call('ask_human', { inquire: '?' }, 'h')]),
    ]);
    for (const event of [
      { type: 'approvalDenied' as const, effectId: 'approval-9-0' },
      { type: 'approvalGiven' as const, effectId: 'human-1-1' },
      { type: 'humanReplied' as const, effectId: 'approval-1-0', answer: 'x' },
      { type: 'humanReplied' as const, effectId: 'human-1-0', answer: 'x' },
      { type: 'approvalGiven' as const, effectId: 'running-1-0/approval-1-0' },
      { type: 'toolStarted' as const, effectId: 'approval-1-0' },
      { type: 'toolProgressed' as const, effectId: 'human-1-1', progress: 1 },
    ]) {
      expect(step(config, state, event), JSON.stringify(event)).toEqual([state, []]);
    }
  });

  it('a run waits for approval first, then for people, then for tools', () => {
    const config = testConfig();
    const { state } = drive(config, 'go', [
      replied('', [call('deploy', {}, 'd'), call('ask_human', { inquire: 'Which?' }, 'h'), call('echo', {}, 'e')]),
    ]);
    expect(state.status).toBe('awaiting_approval');
    const [approved] = on(config, state, { type: 'approvalGiven', callId: 'd' });
    expect(approved.status).toBe('awaiting_human');
    const [echoed] = on(config, approved, done('e'));
    expect(echoed.status).toBe('awaiting_human');
    const [answeredByPerson] = on(config, echoed, { type: 'humanReplied', callId: 'h', answer: 'That one.' });
    expect(answeredByPerson.status).toBe('awaiting_tools');
    const [next] = on(config, answeredByPerson, done('d'));
    expect(next.status).toBe('awaiting_llm');
    expect(toolMessages(next.messages).map((m) => m.content)).toEqual(['ok', 'That one.', 'ok']);
  });

  it('a question that is not a string is shown as the call’s arguments', () => {
    const { effects } = drive(testConfig(), 'go', [replied('', [call('ask_human', { inquire: 42 }, 'h')])]);
    expect(ofType(effects, 'askHuman')[0]?.question).toBe('{"inquire":42}');
  });

  it('a question whose tool has gone is still asked on resume, from a `question` argument or the arguments', () => {
    const config = testConfig();
    const gone = Object.values(specs).filter((t) => t.name !== 'ask_human');
    for (const [args, question] of [
      [{ question: 'Which city?' }, 'Which city?'],
      [{ inquire: 'Which city?' }, '{"inquire":"Which city?"}'],
    ] as const) {
      const { state } = drive(config, 'go', [replied('', [call('ask_human', args, 'h')])]);
      const [changed] = step(config, state, { type: 'toolsChanged', tools: gone });
      const [, effects] = step(config, changed, { type: 'resumed' });
      expect(ofType(effects, 'askHuman').map((e) => e.question)).toEqual([question]);
    }
  });
});

describe('images from tools', () => {
  const image = (data: string) => ({ base64: data, mimeType: 'image/png' });

  it('an image from one call of a turn prunes the older ones even when the other calls brought none', () => {
    const config = testConfig();
    const { state } = drive(config, 'go', [
      replied('', [call('echo', { text: 'z' }, 'z')]),
      { type: 'toolCompleted', callId: 'z', output: 'shot 0', image: image('ZZZZ') },
      replied('', [call('echo', {}, 'a')]),
      { type: 'toolCompleted', callId: 'a', output: 'shot 1', image: image('AAAA') },
      replied('', [call('echo', { text: 'b' }, 'b'), call('echo', { text: 'c' }, 'c')]),
      done('b', 'text only'),
      { type: 'toolCompleted', callId: 'c', output: 'shot 2', image: image('CCCC') },
    ]);
    expect(state.messages.filter((m) => 'image' in m && m.image).map((m) => m.content)).toEqual(['shot 2']);
  });
});

describe('requests', () => {
  it('name the LLM profile when the agent has one, and only then', () => {
    expect(requestOf(initialStep(testConfig({ llmProfile: 'vision' }), 'go')[1]).profile).toBe('vision');
    expect(requestOf(initialStep(testConfig(), 'go')[1])).not.toHaveProperty('profile');
  });

  it('are exactly: system prompt, history, next-step prompt', () => {
    expect(requestOf(initialStep(testConfig(), 'go')[1])).toEqual({
      messages: [
        { role: 'system', content: 'You are a test agent.' },
        { role: 'user', content: 'go' },
        { role: 'user', content: 'What next?' },
      ],
      tools: Object.values(specs),
      toolChoice: 'auto',
      cache: { stableMessages: 2 },
    });
    const bare = requestOf(initialStep(testConfig({ systemPrompt: '', nextStepPrompt: '' }), 'go')[1]);
    expect(bare.messages).toEqual([{ role: 'user', content: 'go' }]);
  });

  describe('with context providers', () => {
    const seen: string[] = [];
    const provider = (name: string, wanted: boolean): ContextProvider => ({
      name,
      when: () => wanted,
      apply: (gathered, request) => {
        seen.push(name);
        return {
          ...request,
          messages: [...request.messages, { role: 'user', content: `${name}: ${String(gathered)}` }],
        };
      },
    });

    it('apply only what was gathered this step, and their messages are sent without a next-step prompt too', () => {
      seen.length = 0;
      const config = testConfig({
        nextStepPrompt: '',
        contextProviders: [provider('skipped', false), provider('page', true)],
      });
      const [state, effects] = initialStep(config, 'go');
      expect(effects).toEqual([{ type: 'gatherContext', id: 'context-1-page', provider: 'page' }]);
      const [, sent] = on(config, state, { type: 'contextGathered', provider: 'page', data: 'the page' });
      expect(seen).toEqual(['page']);
      expect(requestOf(sent).messages).toEqual([
        { role: 'system', content: 'You are a test agent.' },
        { role: 'user', content: 'go' },
        { role: 'user', content: 'page: the page' },
      ]);
    });

    it('a gathering that reports an error gives the provider nothing, even with data', () => {
      seen.length = 0;
      const config = testConfig({ contextProviders: [provider('page', true)] });
      const [state] = initialStep(config, 'go');
      const [, sent] = on(config, state, {
        type: 'contextGathered',
        provider: 'page',
        data: 'stale page',
        error: { code: 'CONTEXT_FAILED', message: 'browser closed' },
      });
      expect(requestOf(sent).messages.slice(-2)).toEqual([
        { role: 'user', content: 'page: undefined' },
        { role: 'user', content: 'What next?' },
      ]);
    });
  });
});
