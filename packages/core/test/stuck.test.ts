import { describe, expect, it } from 'vitest';
import type { AssistantMessage, ToolCall } from '../src/kernel/messages.js';
import {
  hashText,
  recordTurn,
  STUCK_WINDOW,
  type StuckMemory,
  type StuckThresholds,
  stuckHint,
} from '../src/kernel/stuck.js';
import { drive, ofType, on, replied, stepWith, testConfig } from './helpers.js';

/** OpenManus's thresholds, `stuckDetection()`'s defaults. */
const thresholds: StuckThresholds = { duplicates: 2, repeats: 3 };
const text = (content: string): AssistantMessage => ({ role: 'assistant', content });
const calling = (content: string, ...toolCalls: ToolCall[]): AssistantMessage => ({
  role: 'assistant',
  content,
  toolCalls,
});
const tc = (name: string, args: string, id = 'x'): ToolCall => ({ id, name, arguments: args });

/** Records the replies in order; the memory after each. */
function record(replies: readonly AssistantMessage[], memory?: StuckMemory, given = thresholds): StuckMemory[] {
  const out: StuckMemory[] = [];
  let current = memory;
  for (const reply of replies) {
    current = recordTurn(given, current, reply);
    out.push(current);
  }
  return out;
}
const hints = (memories: readonly StuckMemory[]) => memories.map((m) => m.hint);

const sameReply = (times: number) =>
  `You seem to be repeating yourself (the same reply ${times} times). That approach is not working: ` +
  'change strategy, try a different tool or different arguments, or finish if the task is done.';
const sameCall = (tool: string) =>
  `You seem to be repeating yourself (the same ${tool} call with the same arguments again). That approach is not working: ` +
  'change strategy, try a different tool or different arguments, or finish if the task is done.';

describe('hashText', () => {
  it('is 32-bit FNV-1a, in base 36', () => {
    expect(hashText('')).toBe((0x811c9dc5).toString(36));
    expect(hashText('a')).toBe((0xe40c292c).toString(36));
    expect(hashText('foobar')).toBe((0xbf9cf968).toString(36));
  });

  it('gives the same key for the same text and different keys for near misses', () => {
    expect(hashText('echo({"text":"a"})')).toBe(hashText('echo({"text":"a"})'));
    expect(hashText('echo({"text":"a"})')).not.toBe(hashText('echo({"text":"b"})'));
    expect(hashText('ab')).not.toBe(hashText('ba'));
  });
});

describe('recordTurn: what it remembers', () => {
  it('starts from nothing: one turn, no calls, no hint', () => {
    const memory = recordTurn(thresholds, undefined, text('hello'));
    expect(memory).toEqual({ turns: [expect.any(String)], calls: [] });
  });

  it('remembers each call of a turn, in order', () => {
    const memory = recordTurn(thresholds, undefined, calling('', tc('echo', '{"text":"a"}'), tc('write', '{}')));
    expect(memory.turns).toHaveLength(1);
    expect(memory.calls).toHaveLength(2);
    expect(memory.calls[0]).not.toBe(memory.calls[1]);
    expect(memory.hint).toBeUndefined();
  });

  it('an empty reply records nothing and drops the last hint', () => {
    const before: StuckMemory = { turns: ['t1'], calls: ['c1'], hint: 'an old hint' };
    expect(recordTurn(thresholds, before, text(''))).toEqual({ turns: ['t1'], calls: ['c1'] });
    expect(recordTurn(thresholds, before, text('  \n\t '))).toEqual({ turns: ['t1'], calls: ['c1'] });
    expect(recordTurn(thresholds, undefined, text(''))).toEqual({ turns: [], calls: [] });
  });

  it('a reply with only tool calls is recorded', () => {
    const memory = recordTurn(thresholds, undefined, calling('', tc('echo', '{}')));
    expect(memory.turns).toHaveLength(1);
    expect(memory.calls).toHaveLength(1);
  });

  it(`keeps only the last ${STUCK_WINDOW} turns and calls, oldest first`, () => {
    expect(STUCK_WINDOW).toBe(32);
    const many = Array.from({ length: 40 }, (_, i) =>
      calling(`step ${i}`, tc('echo', `{"n":${i}}`), tc('write', `{"n":${i}}`)),
    );
    const alone = many.map((reply) => recordTurn(thresholds, undefined, reply));
    const memories = record(many);
    // 16 turns of 2 calls fill the call window exactly; the turn window is half full.
    expect(memories[15]?.turns).toEqual(alone.slice(0, 16).flatMap((m) => m.turns));
    expect(memories[15]?.calls).toEqual(alone.slice(0, 16).flatMap((m) => m.calls));
    expect(memories[16]?.calls).toEqual(alone.slice(1, 17).flatMap((m) => m.calls));
    expect(memories[31]?.turns).toEqual(alone.slice(0, 32).flatMap((m) => m.turns));
    expect(memories[39]?.turns).toEqual(alone.slice(8).flatMap((m) => m.turns));
    expect(memories[39]?.calls).toEqual(alone.slice(24).flatMap((m) => m.calls));
  });
});

describe('recordTurn: the same reply', () => {
  it(`hints on the reply seen duplicates (2) times before, naming how often`, () => {
    expect(hints(record([text('same'), text('same'), text('same'), text('same')]))).toEqual([
      undefined,
      undefined,
      sameReply(3),
      sameReply(4),
    ]);
  });

  it('the hint is for the repeating turn only', () => {
    const memories = record([text('same'), text('same'), text('same'), text('other')]);
    expect(memories.at(-1)).not.toHaveProperty('hint');
  });

  it('counts replies that differ only in surrounding whitespace as the same', () => {
    expect(hints(record([text('same'), text(' same\n'), text('\tsame ')]))).toEqual([
      undefined,
      undefined,
      sameReply(3),
    ]);
    const call = (args: string) => calling('again', tc('echo', args));
    expect(hints(record([call('{"text":"a"}'), call(' {"text":"a"}'), call('{"text":"a"}\n')]))[2]).toBe(sameReply(3));
  });

  it('follows the threshold of the agent', () => {
    const patient = { ...thresholds, duplicates: 3 };
    expect(hints(record([text('s'), text('s'), text('s'), text('s')], undefined, patient))).toEqual([
      undefined,
      undefined,
      undefined,
      sameReply(4),
    ]);
  });

  it('different replies are different turns, however much they share', () => {
    expect(hints(record([text('a'), text('b'), text('a b'), text('ab'), text('ba')]))).toEqual(
      Array(5).fill(undefined),
    );
  });

  it('a reply that spells a call is not the call itself', () => {
    const spelled = text('echo({})');
    expect(hints(record([spelled, spelled, calling('', tc('echo', '{}'))]))).toEqual([undefined, undefined, undefined]);
  });

  it(`an old repeat that left the window of ${STUCK_WINDOW} turns no longer counts`, () => {
    const between = (n: number) => Array.from({ length: n }, (_, i) => text(`other ${i}`));
    const inside = record([text('A'), text('A'), ...between(30), text('A')]);
    expect(inside.at(-1)?.hint).toBe(sameReply(3));
    const outside = record([text('A'), text('A'), ...between(31), text('A')]);
    expect(outside.at(-1)?.hint).toBeUndefined();
  });
});

describe('recordTurn: the same call', () => {
  const turn = (i: number, ...calls: ToolCall[]) => calling(`attempt ${i}`, ...calls);

  it('hints once the same call was made repeats (3) times before, naming the tool', () => {
    const memories = record([1, 2, 3, 4, 5].map((i) => turn(i, tc('echo', '{"text":"x"}', `id${i}`))));
    expect(hints(memories)).toEqual([undefined, undefined, undefined, sameCall('echo'), sameCall('echo')]);
  });

  it('counts calls that differ only in whitespace around the arguments as the same', () => {
    const args = ['{"text":"x"}', ' {"text":"x"}', '{"text":"x"}\n', '\t{"text":"x"} '];
    expect(hints(record(args.map((a, i) => turn(i, tc('echo', a)))))).toEqual([
      undefined,
      undefined,
      undefined,
      sameCall('echo'),
    ]);
  });

  it('other arguments or another tool are another call', () => {
    const memories = record([
      turn(1, tc('echo', '{"text":"x"}')),
      turn(2, tc('echo', '{"text":"y"}')),
      turn(3, tc('write', '{"text":"x"}')),
      turn(4, tc('echo', '{"text": "x"}')),
      turn(5, tc('echo', '{"text":"x"}')),
    ]);
    expect(hints(memories)).toEqual(Array(5).fill(undefined));
  });

  it('counts every call of a turn and names the first one that repeats', () => {
    const x = tc('echo', '{"text":"x"}');
    const memories = record([turn(1, x, x, x), turn(2, tc('write', '{"path":"/new"}'), x)]);
    expect(hints(memories)).toEqual([undefined, sameCall('echo')]);
  });

  it('the same reply wins over the same call when both repeat', () => {
    const same = calling('same', tc('echo', '{}'));
    expect(hints(record([same, same, same, same]))).toEqual([undefined, undefined, sameReply(3), sameReply(4)]);
  });

  it('follows the threshold of the agent', () => {
    const strict = { ...thresholds, repeats: 1 };
    const memories = record([turn(1, tc('echo', '{}')), turn(2, tc('echo', '{}'))], undefined, strict);
    expect(hints(memories)).toEqual([undefined, sameCall('echo')]);
  });

  it(`an old call that left the window of ${STUCK_WINDOW} calls no longer counts`, () => {
    const x = tc('echo', '{"text":"x"}');
    const others = (n: number) => Array.from({ length: n }, (_, i) => tc('write', `{"n":${i}}`));
    const inside = record([turn(1, x, x, x, ...others(29)), turn(2, x)]);
    expect(inside.at(-1)?.hint).toBe(sameCall('echo'));
    const outside = record([turn(1, x, x, x, ...others(30)), turn(2, x)]);
    expect(outside.at(-1)?.hint).toBeUndefined();
  });
});

describe('stuckHint', () => {
  it('says what repeats and what to do instead', () => {
    expect(stuckHint('the same reply 3 times')).toBe(sameReply(3));
  });
});

describe('stuck detection in a run', () => {
  it('emits the hint as an observation and sends it before the next-step prompt, once', () => {
    const agent = testConfig({ finishOnText: false });
    const { trace } = drive(
      agent,
      'go',
      [replied('same'), replied('same'), replied('same')],
      stepWith({ maxSteps: 10 }),
    );
    const effects = trace[3]?.effects ?? [];
    expect(ofType(effects, 'emit').map((e) => e.observation)).toEqual([
      { kind: 'stepStarted', step: 4, maxSteps: 10 },
      { kind: 'hint', policy: 'stuck', hint: sameReply(3) },
    ]);
    expect(ofType(effects, 'callLlm')[0]?.request.messages.at(-1)).toEqual({
      role: 'user',
      content: `${sameReply(3)}\n\nWhat next?`,
    });
    expect(ofType(trace[2]?.effects ?? [], 'emit').map((e) => e.observation.kind)).toEqual(['stepStarted']);
  });

  it('a hint left when a task ended is not sent with the next task', () => {
    const agent = testConfig({ finishOnText: false });
    const threeSteps = stepWith({ maxSteps: 3 });
    const { state } = drive(agent, 'go', [replied('same'), replied('same'), replied('same')], threeSteps);
    expect(state).toMatchObject({ status: 'finished', finishReason: 'max_steps' });
    const [, effects] = on(agent, state, { type: 'started', input: 'something else' }, threeSteps);
    expect(ofType(effects, 'emit').map((e) => e.observation)).toEqual([{ kind: 'stepStarted', step: 1, maxSteps: 3 }]);
    expect(ofType(effects, 'callLlm')[0]?.request.messages.at(-1)).toEqual({ role: 'user', content: 'What next?' });
  });
});

describe('stuck keys', () => {
  it('are the keys saved states already hold (a turn and its calls hash as they always did)', () => {
    const reply = calling(
      ' Let me add. ',
      tc('add', ' {"a":1} ', 'a'),
      tc('python_execute', '{"code":"print(1)"}', 'b'),
    );
    // Computed by the first released implementation: a state saved then still detects a repeat now.
    expect(recordTurn(thresholds, undefined, reply)).toEqual({ turns: ['q9vhuc'], calls: ['zchykq', 'vrvyqz'] });
  });
});
