import type { ToolCall, Usage } from '@openmanus/core';
import { addUsage } from '@openmanus/core/kernel';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { restoreFlow } from '../src/flowSchema.js';
import {
  type FlowEffect,
  type FlowEvent,
  type FlowState,
  type FlowWork,
  isFlowFinal,
  type WhenBlocked,
} from '../src/flowState.js';
import { initialFlowState, planOf } from '../src/flowStep.js';
import { createPlanningFlow, type PlanningFlow } from '../src/planningFlow.js';
import {
  asks,
  create,
  executor,
  executorRun,
  flails,
  noUsage,
  PLAN_ID,
  planning,
  type Reply,
  says,
  terminates,
} from './flowHelpers.js';

const AGENTS = {
  manus: executor('Manus', 'A versatile agent'),
  data_analysis: executor('DataAnalysis', 'Analyses data'),
  helper: executor('Helper', 'Proofreads'),
};
const TEXTS = ['Find data', '[DATA_ANALYSIS] Chart it', '[MANUS] Write', 'Compare', '[HELPER] Proofread', 'Convert'];

type Verdict = 'done' | 'terminatedOk' | 'gaveUp' | 'failed' | 'maxSteps' | 'paused' | 'cannotStart';
type ModelAnswer = 'good' | 'noCall' | 'badJson' | 'wrongCommand' | 'failed';
type Action =
  | { readonly kind: 'answer'; readonly verdict: Verdict; readonly model: ModelAnswer; readonly steps: string[] }
  | { readonly kind: 'stale'; readonly pick: number }
  | { readonly kind: 'resume' }
  | { readonly kind: 'end'; readonly how: 'timedOut' | 'cancelled' | 'faulted' };

const answerArb: fc.Arbitrary<Action> = fc.record({
  kind: fc.constant('answer' as const),
  verdict: fc.constantFrom<Verdict>(
    'done',
    'done',
    'terminatedOk',
    'gaveUp',
    'failed',
    'maxSteps',
    'paused',
    'cannotStart',
  ),
  model: fc.constantFrom<ModelAnswer>('good', 'good', 'good', 'noCall', 'badJson', 'wrongCommand', 'failed'),
  steps: fc.array(fc.constantFrom(...TEXTS), { maxLength: 4 }),
});
const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { weight: 8, arbitrary: answerArb },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('stale' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'resume' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('end' as const),
      how: fc.constantFrom('timedOut' as const, 'cancelled' as const, 'faulted' as const),
    }),
  },
);

const scenarioArb = fc.record({
  agents: fc.integer({ min: 1, max: 3 }),
  firstOnly: fc.boolean(),
  maxAttempts: fc.integer({ min: 1, max: 3 }),
  whenBlocked: fc.constantFrom<WhenBlocked>('continue', 'replan', 'stop'),
  maxReplans: fc.integer({ min: 0, max: 2 }),
  executorMemory: fc.constantFrom('keep' as const, 'clear' as const),
  actions: fc.array(actionArb, { maxLength: 30 }),
  // Answers that keep coming once the actions are used up, in turn.
  tail: fc.array(answerArb, { minLength: 1, maxLength: 8 }),
});
type Scenario = typeof scenarioArb extends fc.Arbitrary<infer S> ? S : never;

function flowFor(scenario: Scenario): PlanningFlow {
  const agents = Object.fromEntries(Object.entries(AGENTS).slice(0, scenario.agents));
  return createPlanningFlow({
    agents,
    ...(scenario.firstOnly ? { executors: [Object.keys(agents)[0] as string] } : {}),
    maxAttempts: scenario.maxAttempts,
    whenBlocked: scenario.whenBlocked,
    maxReplans: scenario.maxReplans,
    executorMemory: scenario.executorMemory,
  });
}

const REPLIES: Record<Exclude<Verdict, 'cannotStart'>, readonly Reply[]> = {
  done: [says('Done.')],
  terminatedOk: [terminates('success', 'Finished.')],
  gaveUp: [terminates('failure', 'Impossible.')],
  failed: [{ error: 'HTTP 500' }],
  maxSteps: [flails(1), flails(2)],
  paused: [asks('Which one?')],
};

const USAGE = { inputTokens: 7, outputTokens: 3 };

/** A valid answer to the work the flow awaits (the effect as issued, with the memory it carried). */
function answerTo(flow: PlanningFlow, effect: Exclude<FlowEffect, { type: 'emit' }>, action: Action): FlowEvent {
  if (action.kind !== 'answer') throw new Error('not an answer');
  if (effect.type === 'runAgent') {
    if (action.verdict === 'cannotStart') return { type: 'agentFailed', effectId: effect.id, error: 'no sandbox' };
    const agent = flow.agents[effect.executor];
    if (!agent) throw new Error(`no agent ${effect.executor}`);
    const report = executorRun(agent, effect.prompt, REPLIES[action.verdict], effect.state);
    return { type: 'agentFinished', effectId: effect.id, report };
  }
  const effectId = effect.id;
  if (action.model === 'failed')
    return { type: 'llmFailed', effectId, error: { code: 'LLM_OVERLOADED', message: 'HTTP 503' } };
  const responded = (content: string, toolCalls: readonly ToolCall[] = []): FlowEvent => ({
    type: 'llmResponded',
    effectId,
    content,
    toolCalls,
    usage: USAGE,
  });
  if (effect.purpose === 'summary') return responded(action.model === 'good' ? 'All done.' : '');
  const command = effect.purpose === 'plan' ? 'create' : 'update';
  switch (action.model) {
    case 'good':
      return responded('', [
        effect.purpose === 'plan' ? create(action.steps) : planning({ command, plan_id: PLAN_ID, steps: action.steps }),
      ]);
    case 'noCall':
      return responded('No.');
    case 'badJson':
      return responded('', [planning('{"command": ')]);
    case 'wrongCommand':
      return responded('', [planning({ command: 'list' })]);
  }
}

/** An answer to something the flow does not await: an earlier effect, or the awaited one with the wrong kind of answer. */
function staleAnswer(state: FlowState, issued: readonly FlowWork[], pick: number): FlowEvent {
  const old = issued[pick % issued.length] as FlowWork;
  const llmAnswer = (effectId: string): FlowEvent => ({
    type: 'llmResponded',
    effectId,
    content: 'Late.',
    toolCalls: [],
  });
  const agentAnswer = (effectId: string): FlowEvent => ({ type: 'agentFailed', effectId, error: 'late' });
  if (old.id !== state.awaiting?.id) return old.type === 'callLlm' ? llmAnswer(old.id) : agentAnswer(old.id);
  return old.type === 'callLlm' ? agentAnswer(old.id) : llmAnswer(old.id);
}

const workOf = (effects: readonly FlowEffect[]) =>
  effects.filter((e): e is Exclude<FlowEffect, { type: 'emit' }> => e.type !== 'emit');
const withoutMemory = (effect: Exclude<FlowEffect, { type: 'emit' }>): FlowWork => {
  if (effect.type !== 'runAgent') return effect;
  const { state: _memory, ...work } = effect;
  return work;
};
const usageOf = (event: FlowEvent): Usage => {
  if (event.type === 'llmResponded') return { ...USAGE, llmCalls: 1 };
  if (event.type === 'llmFailed') return { ...noUsage, llmCalls: 1 };
  if (event.type === 'agentFinished') return event.report.usage;
  return noUsage;
};

/**
 * Plays a scenario: the actions, then answers in turn until the flow ends, checking every
 * transition; fails if the flow has not ended after `limit` answers.
 */
function play(scenario: Scenario, flow = flowFor(scenario), limit = 300): FlowState {
  const { maxAttempts, executorMemory } = flow.config;
  let state = initialFlowState();
  let effects: readonly FlowEffect[] = [];
  const issued: FlowWork[] = [];
  const byId = new Map<string, Exclude<FlowEffect, { type: 'emit' }>>();
  const runs = new Map<number, number>();
  let usage: Usage = noUsage;

  const record = (from: FlowState, event: FlowEvent, next: FlowState, out: readonly FlowEffect[]) => {
    // A replan makes new steps (a step's runs count from there).
    const answeredReplan =
      from.awaiting?.type === 'callLlm' &&
      from.awaiting.purpose === 'replan' &&
      'effectId' in event &&
      event.effectId === from.awaiting.id;
    if (answeredReplan) runs.clear();
    const work = workOf(out);
    expect(work.length).toBeLessThanOrEqual(1);
    // `awaiting` is set exactly while the flow is not final, and it is the work just issued.
    expect(next.awaiting === undefined).toBe(isFlowFinal(next));
    const [effect] = work;
    if (effect) {
      expect(withoutMemory(effect)).toEqual(next.awaiting);
      if (effect.type === 'runAgent') {
        expect(effect.state).toBe(executorMemory === 'keep' ? next.memory[effect.executor] : undefined);
      }
      if (event.type === 'resumed') {
        expect(effect.id).toBe(from.awaiting?.id);
      } else {
        expect(byId.has(effect.id)).toBe(false);
        issued.push(withoutMemory(effect));
        if (effect.type === 'runAgent' && effect.stepIndex !== undefined) {
          runs.set(effect.stepIndex, (runs.get(effect.stepIndex) ?? 0) + 1);
          expect(runs.get(effect.stepIndex)).toBeLessThanOrEqual(maxAttempts);
        }
      }
      byId.set(effect.id, effect);
    } else if (!isFlowFinal(next)) {
      expect(next.awaiting).toEqual(from.awaiting);
    }
    // A completed step stays completed, unless a replan changed its text (or removed it).
    const after = planOf(next).steps;
    planOf(from).steps.forEach((step, i) => {
      if (step.status !== 'completed') return;
      const now = after[i];
      if (answeredReplan && now?.text !== step.text) return;
      expect(now).toEqual(step);
    });
    expect(JSON.parse(JSON.stringify(next))).toStrictEqual(next);
  };
  const apply = (event: FlowEvent) => {
    const from = state;
    [state, effects] = flow.step(from, event);
    const llmAnswer = event.type === 'llmResponded' || event.type === 'llmFailed';
    const answered =
      'effectId' in event &&
      event.effectId === from.awaiting?.id &&
      llmAnswer === (from.awaiting.type === 'callLlm') &&
      !isFlowFinal(from);
    if (answered) usage = addUsage(usage, usageOf(event));
    record(from, event, state, effects);
    expect(state.usage).toEqual(usage);
    return from;
  };
  apply({ type: 'started', input: 'Compare the rainfall', planId: PLAN_ID });

  for (const action of scenario.actions) {
    if (action.kind === 'answer') {
      const awaited = state.awaiting ? byId.get(state.awaiting.id) : undefined;
      // A final flow gets the answer its last work would have had: it changes nothing.
      const target = awaited ?? byId.get((issued.at(-1) as FlowWork).id);
      if (!target) throw new Error('nothing was issued');
      const from = apply(answerTo(flow, target, action));
      if (!awaited) {
        expect(state).toBe(from);
        expect(effects).toEqual([]);
      }
    } else if (action.kind === 'stale') {
      const from = apply(staleAnswer(state, issued, action.pick));
      expect(state).toBe(from);
      expect(effects).toEqual([]);
    } else if (action.kind === 'resume') {
      const from = apply({ type: 'resumed' });
      expect(state).toEqual(from);
      expect(effects.length).toBe(isFlowFinal(from) ? 0 : 1);
    } else {
      const from = apply(
        action.how === 'timedOut'
          ? { type: 'timedOut', afterMs: 1000 }
          : action.how === 'cancelled'
            ? { type: 'cancelled', reason: 'stop' }
            : { type: 'faulted', error: { code: 'INTERNAL', message: 'broken' } },
      );
      expect(isFlowFinal(state)).toBe(true);
      if (isFlowFinal(from)) expect(state).toBe(from);
      expect(effects).toEqual([]);
    }
  }

  for (let n = 0; !isFlowFinal(state); n++) {
    if (n >= limit) throw new Error(`the flow has not ended after ${limit} answers: ${state.status}`);
    const awaited = byId.get((state.awaiting as FlowWork).id);
    if (!awaited) throw new Error('the awaited work was never issued');
    apply(answerTo(flow, awaited, scenario.tail[n % scenario.tail.length] as Action));
  }
  return state;
}

describe('flow invariants', () => {
  it('every transition: one piece of work at most, awaited while not final, new ids, bounded runs, completed steps kept, JSON state', () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const state = play(scenario);
        expect(isFlowFinal(state)).toBe(true);
        expect(state.awaiting).toBeUndefined();
      }),
      { numRuns: 300 },
    );
  });

  it('a flow answered in full ends completed with a summary, or stopped at a blocked step', () => {
    fc.assert(
      fc.property(
        scenarioArb.map((s) => ({ ...s, actions: s.actions.filter((a) => a.kind !== 'end') })),
        (scenario) => {
          const state = play(scenario);
          if (state.finishReason === 'completed') {
            expect(state.answer).toMatch(/^Plan completed(:\n\n|\. Error generating summary\.$)/);
            expect(planOf(state).steps.every((s) => s.status === 'completed' || s.status === 'blocked')).toBe(true);
          } else if (state.finishReason === 'stopped') {
            expect(scenario.whenBlocked).toBe('stop');
            expect(planOf(state).steps.some((s) => s.status === 'blocked')).toBe(true);
          } else {
            // Only a failed planning request ends a flow otherwise.
            expect(state).toMatchObject({
              finishReason: 'error',
              error: { code: 'LLM_OVERLOADED', message: 'could not make a plan: HTTP 503' },
            });
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('replaying the events of a flow from a saved and restored copy of any state gives the same end', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, fc.nat(), async (scenario, cut) => {
        const flow = flowFor(scenario);
        const events: FlowEvent[] = [];
        const recording: PlanningFlow = {
          ...flow,
          step: (state, event) => {
            events.push(event);
            return flow.step(state, event);
          },
        };
        const end = play(scenario, recording);
        let state = initialFlowState();
        for (const [i, event] of events.entries()) {
          if (i === cut % events.length) {
            const saved: unknown = JSON.parse(JSON.stringify(state));
            state = await restoreFlow(saved);
            expect(state).toEqual(saved);
          }
          [state] = flow.step(state, event);
        }
        expect(state).toEqual(end);
      }),
      { numRuns: 100 },
    );
  });
});
