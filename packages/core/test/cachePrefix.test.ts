import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AgentConfig, defineAgent } from '../src/kernel/agent.js';
import type { ContextProvider } from '../src/kernel/context.js';
import type { Effect, LlmRequest, Observation } from '../src/kernel/effects.js';
import type { AgentEvent } from '../src/kernel/events.js';
import { defaultPolicies } from '../src/kernel/policies.js';
import { createStep, initialState } from '../src/kernel/reducer.js';
import type { AgentState } from '../src/kernel/state.js';

const search = {
  name: 'search',
  description: 'Searches the web',
  parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
  parallelSafe: true,
};

/** A run as the reducer plays it: its main model requests, with what it reported between each and the one before. */
interface Played {
  readonly requests: { readonly request: LlmRequest; readonly since: readonly Observation[] }[];
  readonly state: AgentState;
}

const JUMPS = new Set<Observation['kind']>(['memoryTrimmed', 'memoryCompacted', 'compactionFailed']);

interface Script {
  readonly steps: number;
  /** Per step: the calls' result lengths (characters), whether each has a brief, whether each brings an image. */
  readonly results: (step: number, call: number) => { length: number; brief: boolean; image: boolean };
  readonly callsPerStep: (step: number) => number;
}

const image = { base64: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk', mimeType: 'image/png' };
const text = (seed: number, length: number) => {
  let out = '';
  for (let i = 0; out.length < length; i++) out += `word${(seed * 31 + i * 7) % 997} `;
  return out.slice(0, length);
};

/** Runs of up to 400 steps: long enough for the history to be cut many times. */
const step = createStep(defaultPolicies({ maxSteps: 400 }));

/** Plays `script` against the reducer as model, tools and context gatherer. */
function play(config: AgentConfig, script: Script): Played {
  let [state, effects] = step(config, initialState(), { type: 'started', input: 'research the topic', runId: 'run-1' });
  const requests: Played['requests'] = [];
  let since: Observation[] = [];
  let modelStep = 0;
  const queue: Effect[] = [...effects];
  const feed = (event: AgentEvent) => {
    [state, effects] = step(config, state, event);
    queue.push(...effects);
  };
  while (queue.length > 0) {
    const effect = queue.shift() as Effect;
    if (effect.type === 'emit') since.push(effect.observation);
    else if (effect.type === 'gatherContext')
      feed({ type: 'contextGathered', effectId: effect.id, data: `page at step ${state.step}` });
    else if (effect.type === 'callLlm' && effect.id.startsWith('compact-'))
      feed({ type: 'llmResponded', effectId: effect.id, content: `summary ${state.requestSeq}`, toolCalls: [] });
    else if (effect.type === 'callLlm') {
      requests.push({ request: effect.request, since });
      since = [];
      modelStep++;
      if (modelStep > script.steps) {
        feed({ type: 'llmResponded', effectId: effect.id, content: 'the answer', toolCalls: [] });
        continue;
      }
      const calls = Array.from({ length: script.callsPerStep(modelStep) }, (_, i) => ({
        id: `c${modelStep}_${i}`,
        name: 'search',
        arguments: JSON.stringify({ query: `query ${modelStep}.${i}` }),
      }));
      feed({ type: 'llmResponded', effectId: effect.id, content: `step ${modelStep}`, toolCalls: calls });
    } else if (effect.type === 'callTool') {
      const [s, c] = effect.call.id.slice(1).split('_').map(Number) as [number, number];
      const result = script.results(s, c);
      const output = text(s * 10 + c, result.length);
      feed({
        type: 'toolCompleted',
        effectId: effect.id,
        output,
        ...(result.brief ? { brief: `did ${s}.${c}` } : {}),
        ...(result.image ? { image } : {}),
      });
    }
  }
  return { requests, state };
}

/** The property: between two jumps, every request starts with the stable part of the one before it. */
function checkPrefixes(played: Played) {
  for (let i = 1; i < played.requests.length; i++) {
    const before = played.requests[i - 1]?.request as LlmRequest;
    const { request, since } = played.requests[i] as Played['requests'][number];
    const stable = before.cache?.stableMessages ?? 0;
    expect(stable).toBeLessThanOrEqual(before.messages.length);
    expect(request.tools).toEqual(before.tools);
    if (since.some((o) => JUMPS.has(o.kind))) continue;
    expect(request.messages.slice(0, stable), `request ${i + 1} rewrote the stable part of request ${i}`).toEqual(
      before.messages.slice(0, stable),
    );
  }
}

const pageProvider: ContextProvider = {
  name: 'page',
  when: () => true,
  apply: (gathered, request) => ({
    ...request,
    messages: [...request.messages, { role: 'user', content: `The page: ${String(gathered)}` }],
  }),
};

const agentOf = (overrides: Partial<AgentConfig>) =>
  defineAgent({
    name: 'cached',
    systemPrompt: 'You research.',
    nextStepPrompt: 'What next?',
    tools: [search],
    tokenizer: 'estimate',
    finishOnText: true,
    ...overrides,
  });

describe('the context keeps its prefix (prompt cache)', () => {
  it('between two jumps every request starts with the stable part of the one before (any limits, briefs, images, summaries, page context)', () => {
    const configArb = fc.record({
      maxMessages: fc.integer({ min: 2, max: 40 }),
      maxTokens: fc.option(fc.integer({ min: 50, max: 4000 }), { nil: undefined }),
      shrinkTo: fc.constantFrom(0.25, 0.5, 0.8, 1),
      keepFullObservations: fc.integer({ min: 0, max: 3 }),
      keepImages: fc.integer({ min: 0, max: 2 }),
      summarize: fc.option(
        fc.record({ atTokens: fc.integer({ min: 100, max: 3000 }), keepTurns: fc.integer({ min: 1, max: 3 }) }),
        { nil: undefined },
      ),
      page: fc.boolean(),
    });
    const scriptArb = fc.record({
      steps: fc.integer({ min: 1, max: 40 }),
      seed: fc.integer({ min: 0, max: 10_000 }),
    });
    fc.assert(
      fc.property(configArb, scriptArb, (options, { steps, seed }) => {
        const { maxMessages, maxTokens, shrinkTo, summarize, page, ...rest } = options;
        const config = agentOf({
          ...rest,
          memory: {
            maxMessages,
            shrinkTo,
            ...(maxTokens !== undefined ? { maxTokens } : {}),
            ...(summarize ? { summarize } : {}),
          },
          ...(page ? { contextProviders: [pageProvider] } : {}),
        });
        const played = play(config, {
          steps,
          callsPerStep: (s) => 1 + ((s * 7 + seed) % 3 === 0 ? 1 : 0),
          results: (s, c) => ({
            length: 20 + ((s * 131 + c * 17 + seed) % 600),
            brief: (s + c + seed) % 2 === 0,
            image: (s * 3 + c + seed) % 5 === 0,
          }),
        });
        checkPrefixes(played);
        const last = played.requests.at(-1)?.request;
        expect(last?.cache?.key).toBe('run-1');
        // The tail — what changes per step — is never counted in the stable part.
        expect(last?.messages.at(-1)).toEqual({ role: 'user', content: 'What next?' });
        expect(last?.cache?.stableMessages).toBeLessThan(last?.messages.length ?? 0);
      }),
      { numRuns: 150 },
    );
  });

  it('a 150-step run with the default memory cuts its history a few times, not at every step, and keeps it bounded', () => {
    const config = agentOf({});
    const played = play(config, {
      steps: 150,
      callsPerStep: () => 1,
      results: () => ({ length: 1200, brief: false, image: false }),
    });
    checkPrefixes(played);
    const jumps = played.requests.filter(({ since }) => since.some((o) => o.kind === 'memoryTrimmed')).length;
    // 300 messages through a window of 100 cut to 50 each time: a cut every 25 steps.
    expect(jumps).toBeGreaterThanOrEqual(4);
    expect(jumps).toBeLessThanOrEqual(6);
    const largest = Math.max(...played.requests.map(({ request }) => request.messages.length));
    expect(largest).toBeLessThanOrEqual(100 + 4);
  });

  it('observations with a brief shrink in jumps: with the default keep of 2, once every three steps, not at every step', () => {
    const played = play(agentOf({}), {
      steps: 30,
      callsPerStep: () => 1,
      results: () => ({ length: 400, brief: true, image: false }),
    });
    checkPrefixes(played);
    const jumps = played.requests.filter(({ since }) => since.some((o) => o.kind === 'memoryTrimmed')).length;
    expect(jumps).toBeGreaterThanOrEqual(8);
    expect(jumps).toBeLessThanOrEqual(10);
    // Bounded all the same: never more than twice the kept full observations in a request.
    for (const { request } of played.requests) {
      expect(request.messages.filter((m) => m.role === 'tool' && m.content.length >= 400).length).toBeLessThanOrEqual(
        4,
      );
    }
  });

  it('what the window leaves out is named in a note, with the calls that fetch it again', () => {
    const config = agentOf({ memory: { maxMessages: 6 } });
    const played = play(config, {
      steps: 5,
      callsPerStep: () => 1,
      results: () => ({ length: 40, brief: false, image: false }),
    });
    const last = played.requests.at(-1)?.request as LlmRequest;
    const note = last.messages.find((m) => m.role === 'user' && m.content.startsWith('['));
    expect(note?.content).toMatch(/^\[\d+ earlier messages are left out of this request to keep it short\./);
    expect(note?.content).toContain('search query="query 1.0"');
    // The note sits in the stable part, right after the task.
    expect(last.messages.slice(0, 3).map((m) => m.role)).toEqual(['system', 'user', 'user']);
  });
});
