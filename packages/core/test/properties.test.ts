import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AgentConfig } from '../src/kernel/agent.js';
import { countingTokenizer, summaryMessage, tokensToSend } from '../src/kernel/compaction.js';
import type { Effect } from '../src/kernel/effects.js';
import type { AgentEvent } from '../src/kernel/events.js';
import { selectWindow } from '../src/kernel/memory.js';
import type { Message } from '../src/kernel/messages.js';
import { defaultPolicies, type Policy } from '../src/kernel/policies.js';
import { createStep, initialState, type StepFunction } from '../src/kernel/reducer.js';
import { type AgentState, isFinal } from '../src/kernel/state.js';
import { loadTokenizer, messageTokens } from '../src/kernel/tokens.js';
import { specs, testConfig } from './helpers.js';

type CallKind = 'echo' | 'write' | 'unknown' | 'badJson' | 'terminate' | 'deploy' | 'ask';
interface Reply {
  text: string;
  calls: CallKind[];
}

const replyArb: fc.Arbitrary<Reply> = fc.record({
  text: fc.constantFrom('', 'thinking', 'same', 'answer'),
  calls: fc.array(
    fc.constantFrom<CallKind>('echo', 'echo', 'write', 'unknown', 'badJson', 'terminate', 'deploy', 'ask'),
    { maxLength: 3 },
  ),
});

const scenarioArb = fc.record({
  replies: fc.array(replyArb, { minLength: 1, maxLength: 14 }),
  maxSteps: fc.integer({ min: 1, max: 8 }),
  maxMessages: fc.integer({ min: 2, max: 12 }),
  finishOnText: fc.boolean(),
  toolChoice: fc.constantFrom<'auto' | 'required'>('auto', 'auto', 'required'),
  seed: fc.integer({ min: 0, max: 1_000_000 }),
  policies: fc.constantFrom<PolicySet>('default', 'noStuck', 'allowList', 'stopAfterTwoCalls'),
  // Per mille: how often an earlier event is delivered again, and how often the tool list changes.
  redeliver: fc.integer({ min: 0, max: 400 }),
  toolChanges: fc.integer({ min: 0, max: 300 }),
});

type PolicySet = 'default' | 'noStuck' | 'allowList' | 'stopAfterTwoCalls';
// Host policies of the kinds the README shows: a per-tenant allow-list, a stop condition.
const allowList: Policy = {
  name: 'allowList',
  admitCall: (_context, call) => (call.name === 'write' ? 'Error: write is not allowed for this tenant.' : undefined),
};
const stopAfterTwoCalls: Policy = {
  name: 'stopAfterTwoCalls',
  afterStep: ({ state }) =>
    state.messages.filter((m) => m.role === 'tool').length >= 2
      ? { reason: 'terminated', error: { code: 'POLICY_STOP', message: 'two calls' } }
      : undefined,
};
const stepFor = ({ policies: set, maxSteps }: { policies: PolicySet; maxSteps: number }): StepFunction =>
  set === 'default'
    ? createStep(defaultPolicies({ maxSteps }))
    : set === 'noStuck'
      ? createStep(defaultPolicies({ maxSteps }).filter((p) => p.name !== 'stuck'))
      : createStep([...defaultPolicies({ maxSteps }), set === 'allowList' ? allowList : stopAfterTwoCalls]);

function toCall(kind: CallKind, i: number, turn: number) {
  const id = `t${turn}_${i}`;
  switch (kind) {
    case 'unknown':
      return { id, name: 'does_not_exist', arguments: '{}' };
    case 'badJson':
      return { id, name: 'echo', arguments: '{"text": ' };
    case 'terminate':
      return { id, name: 'terminate', arguments: '{"status":"success"}' };
    case 'deploy':
      return { id, name: 'deploy', arguments: '{}' };
    case 'ask':
      return { id, name: 'ask_human', arguments: '{"inquire":"?"}' };
    default:
      return { id, name: kind, arguments: JSON.stringify({ text: `${turn}` }) };
  }
}

/** Every tool call in a request is answered by exactly one tool message right after it, and no tool message is orphaned. */
function checkRequest(messages: readonly Message[], task: Message | undefined) {
  let open: Set<string> | undefined;
  for (const message of messages) {
    if (message.role === 'tool') {
      expect(open?.has(message.toolCallId), `orphan tool message ${message.toolCallId}`).toBe(true);
      open?.delete(message.toolCallId);
      continue;
    }
    expect(open === undefined || open.size === 0, 'a tool call went unanswered').toBe(true);
    open = message.role === 'assistant' && message.toolCalls ? new Set(message.toolCalls.map((c) => c.id)) : undefined;
  }
  expect(open === undefined || open.size === 0, 'a tool call went unanswered').toBe(true);
  if (task) expect(messages).toContain(task);
}

/** Plays a scenario against the reducer, acting as model, tools and people. Returns the events it fed. */
type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;

function play(config: AgentConfig, scenario: Scenario) {
  const step = stepFor(scenario);
  let rng = scenario.seed;
  const random = (n: number) => {
    rng = (rng * 1103515245 + 12345) % 2147483648;
    return rng % n;
  };
  const first: AgentEvent = { type: 'started', input: 'the task' };
  let [state, effects] = step(config, initialState(), first) as [AgentState, readonly Effect[]];
  const events: AgentEvent[] = [first];
  let replyIndex = 0;
  const feed = (event: AgentEvent) => {
    events.push(event);
    [state, effects] = step(config, state, event) as [AgentState, readonly Effect[]];
    expect(state.step).toBeLessThanOrEqual(scenario.maxSteps);
    // A duplicate, redelivered or late answer to an effect that is no longer outstanding changes nothing.
    if (random(1000) < scenario.redeliver) {
      const again = events[random(events.length)];
      if (again && again.type !== 'started' && again.type !== 'toolsChanged') {
        const [same, none] = step(config, state, again);
        expect(same).toBe(state);
        expect(none).toEqual([]);
        events.push(again);
      }
    }
  };
  for (let guard = 0; guard < 500 && !isFinal(state); guard++) {
    const pending: Effect[] = [...effects];
    const llm = pending.find((e) => e.type === 'callLlm');
    if (llm?.type === 'callLlm') {
      checkRequest(llm.request.messages, state.messages[state.taskIndex]);
      const reply = scenario.replies[replyIndex++] ?? { text: 'final answer', calls: [] };
      // Tools come and go between requests (an MCP server's list changed); the reply is to the request sent.
      if (random(1000) < scenario.toolChanges) {
        const without = Object.values(specs).filter((t) => t.name !== ['echo', 'write', 'deploy'][random(3)]);
        feed({ type: 'toolsChanged', tools: random(2) === 0 ? without : Object.values(specs) });
      }
      feed({
        type: 'llmResponded',
        effectId: llm.id,
        content: reply.text,
        toolCalls: reply.calls.map((k, i) => toCall(k, i, replyIndex)),
      });
      continue;
    }
    const work = pending.filter((e) => e.type !== 'emit' && e.type !== 'finish');
    if (work.length === 0) {
      const waiting = state.turn?.calls.filter((c) => c.phase !== 'done') ?? [];
      expect(waiting, 'a non-final state with nothing to do').toEqual([]);
      break;
    }
    // Answer in a scenario-chosen order; approvals may release new effects, which are collected next round.
    const outcomes: AgentEvent[] = [];
    for (const effect of work) {
      if (effect.type === 'callTool')
        outcomes.push({ type: 'toolCompleted', effectId: effect.id, output: `out ${effect.call.name}` });
      if (effect.type === 'askHuman') outcomes.push({ type: 'humanReplied', effectId: effect.id, answer: 'yes' });
      if (effect.type === 'gatherContext')
        outcomes.push({ type: 'contextGathered', effectId: effect.id, data: { seen: true } });
      if (effect.type === 'requestApproval') {
        outcomes.push(
          random(2) === 0
            ? { type: 'approvalGiven', effectId: effect.id }
            : { type: 'approvalDenied', effectId: effect.id },
        );
      }
    }
    const released: Effect[] = [];
    while (outcomes.length > 0) {
      const [event] = outcomes.splice(random(outcomes.length), 1);
      if (!event) break;
      feed(event);
      released.push(...effects);
    }
    effects = released;
  }
  return { state, events };
}

const configFor = (s: { maxMessages: number; finishOnText: boolean; toolChoice: 'auto' | 'required' }) =>
  testConfig({
    // A provider that gathers after every `write` call, so context waits mix with everything else.
    contextProviders: [
      {
        name: 'files',
        when: (state) => state.messages.at(-1)?.role === 'tool' && state.messages.at(-1)?.content === 'out write',
        apply: (_gathered, request) => ({
          ...request,
          messages: [...request.messages, { role: 'user', content: 'files listed' }],
        }),
      },
    ],
    memory: { maxMessages: s.maxMessages },
    finishOnText: s.finishOnText,
    toolChoice: s.toolChoice,
  });

describe('reducer invariants', () => {
  it('every request answers each tool call exactly once, keeps the task, and the run ends within maxSteps', () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const { state } = play(configFor(scenario), scenario);
        expect(isFinal(state) || ['awaiting_human', 'awaiting_approval'].includes(state.status)).toBe(true);
        expect(state.step).toBeLessThanOrEqual(scenario.maxSteps);
      }),
      { numRuns: 300 },
    );
  });

  it('replaying the same events gives the same state', () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const config = configFor(scenario);
        const { state, events } = play(config, scenario);
        const step = stepFor(scenario);
        let replayed = initialState();
        for (const event of events) [replayed] = step(config, replayed, event);
        expect(replayed).toEqual(state);
      }),
      { numRuns: 200 },
    );
  });

  it('a state survives a JSON round trip at any point and the run ends the same', () => {
    fc.assert(
      fc.property(scenarioArb, fc.nat(), (scenario, cut) => {
        const config = configFor(scenario);
        const { state, events } = play(config, scenario);
        const step = stepFor(scenario);
        const at = cut % events.length;
        let resumed = initialState();
        events.forEach((event, i) => {
          if (i === at) resumed = JSON.parse(JSON.stringify(resumed)) as AgentState;
          [resumed] = step(config, resumed, event);
        });
        expect(JSON.parse(JSON.stringify(resumed))).toEqual(JSON.parse(JSON.stringify(state)));
      }),
      { numRuns: 200 },
    );
  });

  it('after a cancel at any point, a new message still sends well-formed history', () => {
    fc.assert(
      fc.property(scenarioArb, fc.nat(), (scenario, cut) => {
        const config = configFor(scenario);
        const { events } = play(config, scenario);
        const step = stepFor(scenario);
        let state = initialState();
        for (const event of events.slice(0, 1 + (cut % events.length))) [state] = step(config, state, event);
        [state] = step(config, state, { type: 'cancelled' });
        const [next, effects] = step(config, state, { type: 'started', input: 'go on' });
        const llm = effects.find((e) => e.type === 'callLlm');
        if (llm?.type === 'callLlm') checkRequest(llm.request.messages, next.messages[next.taskIndex]);
        else expect(next.status).toBe('awaiting_context');
      }),
      { numRuns: 200 },
    );
  });

  it('finished states are terminal: no event but a new task changes them', () => {
    const eventArb = fc.constantFrom<AgentEvent>(
      { type: 'llmResponded', effectId: 'llm-1', content: 'x', toolCalls: [] },
      { type: 'llmFailed', effectId: 'llm-1', error: { code: 'LLM_SERVER', message: 'x' } },
      { type: 'toolCompleted', effectId: 'running-1-0', output: 'x' },
      { type: 'humanReplied', effectId: 'human-1-0', answer: 'x' },
      { type: 'approvalGiven', effectId: 'approval-1-0' },
      { type: 'approvalDenied', effectId: 'approval-1-0' },
      { type: 'cancelled' },
      { type: 'faulted', error: { code: 'INTERNAL', message: 'x' } },
    );
    fc.assert(
      fc.property(scenarioArb, eventArb, (scenario, event) => {
        const config = configFor(scenario);
        const { state } = play(config, scenario);
        fc.pre(isFinal(state));
        expect(stepFor(scenario)(config, state, event)).toEqual([state, []]);
      }),
      { numRuns: 200 },
    );
  });
});

describe('memory window invariants', () => {
  const historyArb = fc
    .array(fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 4 })), { minLength: 1, maxLength: 30 })
    .map((turns) => {
      const messages: Message[] = [{ role: 'user', content: 'task' }];
      turns.forEach((calls, t) => {
        const ids = Array.from({ length: calls }, (_, i) => `c${t}_${i}`);
        messages.push({
          role: 'assistant',
          content: `a${t}`,
          ...(calls ? { toolCalls: ids.map((id) => ({ id, name: 'echo', arguments: '{}' })) } : {}),
        });
        for (const id of ids) messages.push({ role: 'tool', content: 'ok', toolCallId: id, name: 'echo' });
      });
      return messages;
    });

  it('never orphans a tool message, never drops the task, and stays within the cap when turns allow', () => {
    fc.assert(
      fc.property(historyArb, fc.integer({ min: 1, max: 20 }), (messages, max) => {
        const window = selectWindow(messages, 0, max);
        checkRequest(window.messages, messages[0]);
        expect(window.messages[0]).toBe(messages[0]);
        expect(window.messages.length + window.dropped).toBe(messages.length);
        const lastTurnStart = messages.findLastIndex((m) => m.role === 'assistant');
        const lastTurn = messages.length - lastTurnStart;
        expect(window.messages.length).toBeLessThanOrEqual(Math.max(max, lastTurn + 1));
      }),
      { numRuns: 500 },
    );
  });
});

describe('the count of history tokens compaction reads', () => {
  // Summaries are due often (keepTurns 1, a low threshold); images and briefs make the reducer
  // replace older messages in place; a config of another tokenizer, or none that summarises, and
  // states saved with or without the count (as by earlier versions) come between any two events.
  const summarising = (tokenizer: 'estimate' | 'o200k_base') =>
    testConfig({
      tokenizer,
      keepImages: 1,
      keepFullObservations: 1,
      memory: { maxMessages: 100, summarize: { atTokens: 150, keepTurns: 1 } },
    });
  const configs = [summarising('estimate'), summarising('o200k_base'), testConfig()];
  const sixSteps = createStep(defaultPolicies({ maxSteps: 6 }));
  beforeAll(() => loadTokenizer('o200k_base'));

  const resultArb = fc.record({ chars: fc.nat({ max: 700 }), image: fc.boolean(), brief: fc.boolean() });
  const moveArb = fc.oneof(
    {
      weight: 8,
      arbitrary: fc.record({
        kind: fc.constant('answer' as const),
        text: fc.constantFrom('', 'noted', 'the summary so far'),
        fail: fc.boolean(),
        results: fc.array(resultArb, { maxLength: 3 }),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('save' as const), withCount: fc.boolean() }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('config' as const), index: fc.nat({ max: 2 }) }) },
  );
  const image = { base64: 'iVBORw0KGgo=', mimeType: 'image/png' };

  /** The tokens of what a request would carry, counted message by message. */
  const recount = (config: AgentConfig, state: AgentState) => {
    const from = state.summary?.upTo ?? 0;
    const carried = [
      ...(state.summary && state.taskIndex < from ? [state.messages[state.taskIndex] as Message] : []),
      ...(state.summary ? [summaryMessage(state.summary)] : []),
      ...state.messages.slice(from),
    ];
    return carried.reduce((sum, m) => sum + messageTokens(m, countingTokenizer(config)), 0);
  };

  it('always equals a full recount, and is kept whenever the messages change', () => {
    fc.assert(
      fc.property(fc.array(moveArb, { minLength: 1, maxLength: 40 }), (moves) => {
        let config = configs[0] as AgentConfig;
        let [state, effects] = sixSteps(config, initialState(), { type: 'started', input: 'the task' });
        let open: Effect[] = [...effects];
        let turn = 0;
        const feed = (event: AgentEvent) => {
          const before = state;
          [state, effects] = sixSteps(config, state, event);
          open.push(...effects);
          if (state.messages === before.messages && state.summary === before.summary) return;
          if (!config.memory.summarize) {
            expect(state.historyTokens).toBeUndefined();
            return;
          }
          const from = state.summary?.upTo ?? 0;
          const tokenizer = countingTokenizer(config);
          expect(state.historyTokens).toEqual({
            tokenizer,
            from,
            to: state.messages.length,
            tokens: state.messages.slice(from).reduce((sum, m) => sum + messageTokens(m, tokenizer), 0),
          });
        };
        for (const move of moves) {
          if (move.kind === 'cancel') feed({ type: 'cancelled' });
          else if (move.kind === 'config') config = configs[move.index] as AgentConfig;
          else if (move.kind === 'save') {
            const { historyTokens: count, ...rest } = JSON.parse(JSON.stringify(state)) as AgentState;
            state = move.withCount && count ? { ...rest, historyTokens: count } : rest;
          } else if (isFinal(state) || state.status === 'idle') {
            open = [];
            feed({ type: 'started', input: `task ${turn}`, ...(move.fail ? { image } : {}) });
          } else {
            const pending = open;
            open = [];
            const llm = pending.find((e) => e.type === 'callLlm');
            if (llm?.type === 'callLlm' && llm.id.startsWith('compact-')) {
              feed(
                move.fail
                  ? { type: 'llmFailed', effectId: llm.id, error: { code: 'LLM_SERVER', message: 'down' } }
                  : { type: 'llmResponded', effectId: llm.id, content: move.text, toolCalls: [] },
              );
            } else if (llm?.type === 'callLlm') {
              turn++;
              feed({
                type: 'llmResponded',
                effectId: llm.id,
                content: move.text,
                toolCalls: move.results.map((_, i) => ({ id: `t${turn}_${i}`, name: 'echo', arguments: '{}' })),
              });
            } else {
              for (const effect of pending) {
                if (effect.type === 'callTool') {
                  const result = move.results[Number(effect.id.split('-').at(-1))] ?? { chars: 10 };
                  feed({
                    type: 'toolCompleted',
                    effectId: effect.id,
                    output: 'x'.repeat(result.chars),
                    ...('image' in result && result.image ? { image } : {}),
                    ...('brief' in result && result.brief ? { brief: 'short' } : {}),
                  });
                } else if (effect.type === 'gatherContext') {
                  feed({ type: 'contextGathered', effectId: effect.id, data: null });
                }
              }
            }
          }
          expect(tokensToSend(config, state)).toBe(recount(config, state));
        }
      }),
      { numRuns: 300 },
    );
  });
});
