import { describe, expect, it } from 'vitest';
import {
  createAgent,
  createStep,
  defaultPolicies,
  type Policy,
  run,
  stepLimit,
  stuckDetection,
  terminate,
} from '../src/index.js';
import { scriptedLlm } from '../src/testing/index.js';
import { call, drive, ofType, testConfig } from './helpers.js';
import { echo } from './toolHelpers.js';

const loop = (n: number) =>
  Array.from({ length: n }, () => ({ toolCalls: [{ name: 'echo', arguments: { text: 'same' } }] }));

describe('policies a host composes', () => {
  it('the default step is the loop with the default policies', () => {
    expect(defaultPolicies.map((p) => p.name)).toEqual(['stepLimit', 'tokenBudget', 'stuck', 'terminalTools']);
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
    const policies = [...defaultPolicies.filter((p) => p !== stuckDetection), strict];
    const agent = createAgent({ name: 'a', tools: [echo], maxSteps: 3, policies });
    const llm = scriptedLlm(loop(3));
    const outcome = await run(agent, 'go', { llm });
    expect(outcome.finishReason).toBe('max_steps');
    expect(llm.requests[1]?.messages.at(-1)?.content).not.toMatch(/Same call twice/);
    expect(llm.requests[2]?.messages.at(-1)?.content).toBe('Same call twice: try something else.');
    expect(outcome.state.policies.strictStuck).toHaveLength(3);
    expect(outcome.state.policies.stuck).toBeUndefined();
  });

  it('drop one: without the terminal-tools policy, terminate no longer ends the run', async () => {
    const policies = defaultPolicies.filter((p) => p.name !== 'terminalTools');
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
    const agent = createAgent({ name: 'a', tools: [echo], policies: [...defaultPolicies, dollars(0.05, 0.01)] });
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
    const step = createStep([...defaultPolicies, allowList]);
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
    const agent = createAgent({ name: 'a', tools: [echo], policies: [...defaultPolicies, stopAfter('echo')] });
    const llm = scriptedLlm(loop(1));
    expect(await run(agent, 'go', { llm })).toMatchObject({ finishReason: 'terminated', answer: 'stopped after echo' });
  });

  it('policies run in order and each sees only its own memory', () => {
    const seen: unknown[] = [];
    const spy: Policy = {
      name: 'spy',
      afterResponse: ({ memory }) => {
        seen.push(memory);
        return ((memory as number | undefined) ?? 0) + 1;
      },
    };
    const config = testConfig({ finishOnText: false, maxSteps: 4 });
    const step = createStep([stepLimit, spy]);
    let [state] = drive(config, 'go', []).trace.map((t) => t.state);
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
