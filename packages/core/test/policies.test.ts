import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type AgentConfigInput,
  type AgentInput,
  createAgent,
  defaultAgentConfig,
  defineAgent,
} from '../src/kernel/agent.js';
import {
  defaultPolicies,
  definePolicy,
  isStepLimit,
  isTokenBudget,
  type Policy,
  stepLimit,
  stuckDetection,
  terminalTools,
  tokenBudget,
} from '../src/kernel/policies.js';
import { createStep } from '../src/kernel/reducer.js';
import { restoreState } from '../src/kernel/stateSchema.js';
import type { StuckMemory } from '../src/kernel/stuck.js';
import { run } from '../src/shell/run.js';
import { scriptedLlm } from '../src/testing/scriptedLlm.js';
import { terminate } from '../src/tools/terminate.js';
import { call, drive, ofType, on, replied, start, testConfig } from './helpers.js';
import { echo } from './toolHelpers.js';

const loop = (n: number) =>
  Array.from({ length: n }, () => ({ toolCalls: [{ name: 'echo', arguments: { text: 'same' } }] }));

describe('policies a host composes', () => {
  it('the default policies are OpenManus’s: 30 steps, stuck detection, terminal tools; a budget only when given one', () => {
    expect(defaultPolicies().map((p) => p.name)).toEqual(['stepLimit', 'stuck', 'terminalTools']);
    expect(defaultPolicies().find(isStepLimit)?.maxSteps).toBe(30);
    expect(defaultPolicies().find((p) => p.name === 'stuck')).toMatchObject({ duplicates: 2, repeats: 3 });
    const chosen = defaultPolicies({ maxSteps: 7, maxInputTokens: 900 });
    expect(chosen.map((p) => p.name)).toEqual(['stepLimit', 'tokenBudget', 'stuck', 'terminalTools']);
    expect(chosen.find(isStepLimit)?.maxSteps).toBe(7);
    expect(chosen.find(isTokenBudget)?.maxInputTokens).toBe(900);
    // A new list each call: extending one changes no other.
    expect(defaultPolicies()).not.toBe(defaultPolicies());
  });

  it('replace one: a stuck detector of the host’s own instead of the built-in one', async () => {
    const strict: Policy = {
      name: 'strictStuck',
      afterResponse: ({ memory }, message) => {
        const seen = (memory as string[] | undefined) ?? [];
        return [...seen, JSON.stringify(message.toolCalls?.map((c) => [c.name, c.arguments]))];
      },
      prompt: ({ memory }) => {
        const seen = (memory as string[] | undefined) ?? [];
        return seen.length >= 2 && seen.at(-1) === seen.at(-2) ? 'Same call twice: try something else.' : undefined;
      },
    };
    const policies = [...defaultPolicies({ maxSteps: 3 }).filter((p) => p.name !== 'stuck'), strict];
    const agent = createAgent({ name: 'a', tools: [echo], policies });
    const llm = scriptedLlm(loop(3));
    const outcome = await run(agent, 'go', { llm });
    expect(outcome.finishReason).toBe('max_steps');
    expect(llm.requests[1]?.messages.at(-1)?.content).not.toMatch(/Same call twice/);
    expect(llm.requests[2]?.messages.at(-1)?.content).toBe('Same call twice: try something else.');
    expect(outcome.state.policies.strictStuck).toHaveLength(3);
    expect(outcome.state.policies.stuck).toBeUndefined();
  });

  it('drop one: without the terminal-tools policy, terminate no longer ends the run', async () => {
    const policies = defaultPolicies().filter((p) => p.name !== 'terminalTools');
    const agent = createAgent({ name: 'a', tools: [terminate], policies });
    const llm = scriptedLlm([
      { toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
      { content: 'fine' },
    ]);
    expect(await run(agent, 'go', { llm })).toMatchObject({ finishReason: 'answered', answer: 'fine' });
    const withDefaults = createAgent({ name: 'a', tools: [terminate] });
    const again = scriptedLlm([{ toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] }]);
    expect((await run(withDefaults, 'go', { llm: again })).finishReason).toBe('terminated');
  });

  it('add one: a budget in dollars stops the run before the request that would exceed it', async () => {
    const dollars = (limit: number, perThousandTokens: number): Policy => ({
      name: 'dollarBudget',
      beforeStep: ({ state }) => {
        const spent = ((state.usage.inputTokens + state.usage.outputTokens) / 1000) * perThousandTokens;
        return spent >= limit
          ? { reason: 'token_limit', say: `Stopped: $${spent.toFixed(2)} spent of $${limit}.` }
          : undefined;
      },
    });
    const agent = createAgent({ name: 'a', tools: [echo], policies: [...defaultPolicies(), dollars(0.05, 0.01)] });
    const script = Array.from({ length: 10 }, () => ({
      toolCalls: [{ name: 'echo', arguments: { text: `${Math.random()}` } }],
      usage: { inputTokens: 2000, outputTokens: 500 },
    }));
    const llm = scriptedLlm(script);
    const outcome = await run(agent, 'go', { llm });
    expect(outcome).toMatchObject({ finishReason: 'token_limit', answer: 'Stopped: $0.05 spent of $0.05.' });
    expect(llm.requests).toHaveLength(2);
  });

  it('add one: a per-tenant allow-list refuses calls the model sees as errors', () => {
    const allowList: Policy = {
      name: 'allowList',
      admitCall: (_context, call) =>
        call.name === 'echo' ? undefined : `Error: ${call.name} is not allowed for tenant acme.`,
    };
    const config = testConfig();
    const step = createStep([...defaultPolicies(), allowList]);
    const { state } = drive(config, 'go', []);
    const [next, effects] = step(config, state, {
      type: 'llmResponded',
      effectId: `llm-${state.requestSeq}`,
      content: '',
      toolCalls: [call('write', { path: '/x' }, 'w'), call('echo', { text: 'hi' }, 'e')],
    });
    expect(ofType(effects, 'callTool').map((e) => e.call.name)).toEqual(['echo']);
    expect(next.turn?.calls[0]).toMatchObject({
      phase: 'done',
      isError: true,
      output: 'Error: write is not allowed for tenant acme.',
    });
  });

  it('add one: a stop condition like stopWhen ends the run after a given tool was called', async () => {
    const stopAfter = (tool: string): Policy => ({
      name: `stopAfter:${tool}`,
      afterStep: (_context, calls) =>
        calls.some((c) => c.call.name === tool && !c.isError)
          ? { reason: 'terminated', answer: `stopped after ${tool}` }
          : undefined,
    });
    const agent = createAgent({ name: 'a', tools: [echo], policies: [...defaultPolicies(), stopAfter('echo')] });
    const llm = scriptedLlm(loop(1));
    expect(await run(agent, 'go', { llm })).toMatchObject({ finishReason: 'terminated', answer: 'stopped after echo' });
  });

  it('policies run in order and each sees only its own memory, typed', () => {
    const seen: (number | undefined)[] = [];
    const spy = definePolicy<number>({
      name: 'spy',
      afterResponse: ({ memory }) => {
        seen.push(memory);
        return (memory ?? 0) + 1;
      },
    });
    const config = testConfig({ finishOnText: false });
    const step = createStep([stepLimit(4), spy]);
    let [state] = start(config, 'go', step);
    for (let i = 0; i < 3 && state; i++) {
      [state] = step(config, state, {
        type: 'llmResponded',
        effectId: `llm-${state.requestSeq}`,
        content: `${i}`,
        toolCalls: [],
      });
    }
    expect(seen).toEqual([undefined, 1, 2]);
    expect(state?.policies).toEqual({ spy: 3 });
  });
});

describe('policies carry their own settings', () => {
  const looping = testConfig({ finishOnText: false });
  const replies = (n: number) => Array.from({ length: n }, (_, i) => replied(`${i}`));

  it('stepLimit(n): the n-th step is the last, and each step reports n', () => {
    const step = createStep([stepLimit(2)]);
    const { state, trace } = drive(looping, 'go', replies(3), step);
    expect(state).toMatchObject({ status: 'finished', finishReason: 'max_steps', step: 2 });
    expect(state.error).toEqual({ code: 'MAX_STEPS', message: 'reached the step limit (2)' });
    expect(ofType(trace[1]?.effects ?? [], 'emit').map((e) => e.observation)).toEqual([
      { kind: 'stepStarted', step: 2, maxSteps: 2 },
    ]);
    for (const bad of [0, -1, 2.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => stepLimit(bad)).toThrow(
        new RangeError(`stepLimit(maxSteps): maxSteps must be a positive integer, got ${bad}`),
      );
    }
  });

  it('without a step limit there is no limit, and steps report none', () => {
    const step = createStep([terminalTools()]);
    const { state, effects } = drive(looping, 'go', replies(40), step);
    expect(state).toMatchObject({ status: 'awaiting_llm', step: 41 });
    expect(ofType(effects, 'emit').map((e) => e.observation)).toEqual([{ kind: 'stepStarted', step: 41 }]);
  });

  it('stuckDetection({ duplicates, repeats }): the hint comes at the thresholds given', () => {
    const hinted = (policies: readonly Policy[], events: Parameters<typeof drive>[2]) =>
      drive(looping, 'go', events, createStep(policies)).trace.map((t) =>
        ofType(t.effects, 'emit').some((e) => e.observation.kind === 'hint'),
      );
    const same = replies(4).map(() => replied('same'));
    expect(hinted([stuckDetection()], same)).toEqual([false, false, false, true, true]);
    expect(hinted([stuckDetection({ duplicates: 1 })], same)).toEqual([false, false, true, true, true]);
    expect(hinted([stuckDetection({ duplicates: 3 })], same)).toEqual([false, false, false, false, true]);
    // The same call in differently worded turns: `repeats` counts the calls.
    const calls = [0, 1, 2].flatMap((i) => [
      replied(`try ${i}`, [call('echo', { text: 'x' }, `e${i}`)]),
      { type: 'toolCompleted' as const, callId: `e${i}`, output: 'x' },
    ]);
    expect(hinted([stuckDetection({ repeats: 1 })], calls).filter(Boolean)).toHaveLength(2);
    expect(hinted([stuckDetection()], calls).some(Boolean)).toBe(false);
    expect(stuckDetection({ repeats: 1 })).toMatchObject({ name: 'stuck', duplicates: 2, repeats: 1 });
    for (const [option, value] of [
      ['duplicates', 0],
      ['repeats', 33],
      ['repeats', 1.5],
    ] as const) {
      expect(() => stuckDetection({ [option]: value })).toThrow(
        new RangeError(`stuckDetection: ${option} must be an integer from 1 to 32, got ${value}`),
      );
    }
  });

  it('tokenBudget({ maxInputTokens }): a request over it is never sent; `count` counts instead', () => {
    const config = testConfig();
    const over = drive(config, 'x'.repeat(400), [], createStep([tokenBudget({ maxInputTokens: 30 })]));
    expect(over.state).toMatchObject({ status: 'finished', finishReason: 'token_limit' });
    expect(ofType(over.effects, 'callLlm')).toHaveLength(0);
    const counted: number[] = [];
    const count = (request: { readonly messages: readonly unknown[] }) => {
      counted.push(request.messages.length);
      return 10;
    };
    const under = drive(config, 'x'.repeat(400), [], createStep([tokenBudget({ maxInputTokens: 30, count })]));
    expect(ofType(under.effects, 'callLlm')).toHaveLength(1);
    expect(counted).toEqual([3]);
    // Counted its own way, the stop says nothing of an estimate.
    const tight = drive(config, 'go', [], createStep([tokenBudget({ maxInputTokens: 9, count })]));
    expect(tight.state.answer).toBe(
      'Stopped before step 1: the request needs 10 input tokens, more than the limit of 9. It was not sent.',
    );
    expect(() => tokenBudget({ maxInputTokens: 0 })).toThrow(
      new RangeError('tokenBudget: maxInputTokens must be a positive integer, got 0'),
    );
  });

  it('removing a policy leaves no setting behind: the agent config has none of theirs', () => {
    const moved = ['maxSteps', 'maxInputTokens', 'duplicateThreshold', 'repeatedCallThreshold'];
    const config = defineAgent({ name: 'a' });
    for (const setting of moved) {
      expect(Object.keys(defaultAgentConfig)).not.toContain(setting);
      expect(Object.keys(config)).not.toContain(setting);
    }
    // A config written for the old shape is refused, naming the policy the setting belongs to.
    const old = { name: 'a', maxSteps: 5 } as AgentConfigInput;
    expect(() => defineAgent(old)).toThrow(
      new TypeError(
        "maxSteps is not an agent setting: it belongs to its policy, stepLimit(maxSteps), in the agent's policies (see defaultPolicies)",
      ),
    );
    expect(() => createAgent({ name: 'a', repeatedCallThreshold: 2 } as AgentInput)).toThrow(
      /stuckDetection\(\{ repeats \}\)/,
    );
  });

  it('a factory given where its policy belongs is refused with what to write', () => {
    const uncalled = [stepLimit(3), terminalTools] as unknown as Policy[];
    expect(() => createStep(uncalled)).toThrow(
      new TypeError('policies[1] is a function, not a policy: call it (terminalTools())'),
    );
    expect(() => createAgent({ name: 'a', policies: [null] as unknown as Policy[] })).toThrow(
      new TypeError('policies[0] is not a policy: expected an object with a name and hooks'),
    );
  });

  it('a list mixes policies of any memory; stuck detection remembers a StuckMemory', () => {
    const replyCount = definePolicy<number>({ name: 'replies', afterResponse: ({ memory }) => (memory ?? 0) + 1 });
    const stuck: Policy<StuckMemory> = stuckDetection();
    const policies: readonly Policy[] = [stepLimit(5), stuck, replyCount, terminalTools()];
    const { state } = drive(looping, 'go', [replied('same'), replied('same')], createStep(policies));
    expect(state.policies.replies).toBe(2);
    expect(state.policies.stuck).toMatchObject({ turns: [expect.any(String), expect.any(String)], calls: [] });
  });
});

describe('states saved before policies carried their settings', () => {
  it('a v1 state loads, and stuck detection goes on from the memory it saved', () => {
    const file = join(import.meta.dirname, 'fixtures', 'state-v1-finished.json');
    const restored = restoreState(JSON.parse(readFileSync(file, 'utf8')));
    if (!restored.isOk()) throw new Error(restored.error.message);
    const saved = restored.value;
    expect(saved.policies.stuck).toEqual({ turns: ['x9iiey', '1eh33hc'], calls: ['1tmq975'] });
    // The saved echo call, made once more: with `repeats: 1` the one in the saved memory counts.
    const step = createStep([stepLimit(5), stuckDetection({ repeats: 1 }), terminalTools()]);
    const config = testConfig();
    const [again] = step(config, saved, { type: 'started', input: 'once more' });
    const [calling] = on(config, again, replied('', [call('echo', { text: 'x' }, 'y')]), step);
    const [, effects] = on(config, calling, { type: 'toolCompleted', callId: 'y', output: 'ok' }, step);
    expect(ofType(effects, 'emit').map((e) => e.observation)).toContainEqual({
      kind: 'hint',
      policy: 'stuck',
      hint: expect.stringMatching(/the same echo call with the same arguments again/),
    });
  });
});
