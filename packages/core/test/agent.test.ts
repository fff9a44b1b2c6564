import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defaultAgentConfig, defineAgent } from '../src/kernel/agent.js';
import { type Policy, stepLimit } from '../src/kernel/policies.js';
import { initialState, type StepFunction } from '../src/kernel/reducer.js';
import type { AgentState } from '../src/kernel/state.js';
import { defineTool } from '../src/tools/defineTool.js';
import { call, ofType, specs } from './helpers.js';
import { echo } from './toolHelpers.js';

const write = defineTool({
  name: 'write',
  description: 'Write',
  parameters: z.object({ path: z.string() }),
  execute: ({ path }) => path,
});

describe('defineAgent', () => {
  it('fills in every default: a name is a complete agent', () => {
    expect(defineAgent({ name: 'minimal' })).toEqual({
      name: 'minimal',
      description: '',
      systemPrompt: '',
      nextStepPrompt: '',
      tools: [],
      toolChoice: 'auto',
      maxToolArgsChars: 200_000,
      finishOnText: true,
      memory: { maxMessages: 100 },
      tokenizer: 'cl100k_base',
      keepImages: 1,
      keepFullObservations: 2,
    });
    expect(defineAgent({ name: 'minimal' })).toEqual({ name: 'minimal', ...defaultAgentConfig });
  });

  it('what is given wins over the defaults', () => {
    const config = defineAgent({
      name: 'custom',
      maxToolArgsChars: 1,
      memory: { maxMessages: 7 },
      toolChoice: 'required',
      tools: [specs.echo],
    });
    expect(config).toMatchObject({
      maxToolArgsChars: 1,
      memory: { maxMessages: 7 },
      toolChoice: 'required',
      tools: [specs.echo],
    });
  });

  it('refuses a tool-argument cap that is not a positive integer, saying what it got', () => {
    for (const maxToolArgsChars of [0, -1, 2.5, Number.NaN]) {
      expect(() => defineAgent({ name: 'a', maxToolArgsChars })).toThrow(
        new RangeError(`maxToolArgsChars must be a positive integer, got ${maxToolArgsChars}`),
      );
      expect(() => defineAgent({ name: 'a', maxToolArgsChars })).toThrow(RangeError);
    }
  });

  it('refuses two tools with the same name, naming the agent and the tool', () => {
    const again = { ...specs.echo, description: 'Another echo' };
    expect(() => defineAgent({ name: 'writer', tools: [specs.echo, specs.write, again] })).toThrow(
      new Error('agent "writer" has two tools named "echo"'),
    );
  });

  it('accepts tools with different names', () => {
    expect(defineAgent({ name: 'a', tools: Object.values(specs) }).tools.map((t) => t.name)).toEqual([
      'echo',
      'write',
      'terminate',
      'deploy',
      'ask_human',
    ]);
  });
});

describe('createAgent', () => {
  const started = (config: ReturnType<typeof defineAgent>, step: StepFunction, state: AgentState = initialState()) =>
    step(config, state, { type: 'started', input: 'go' });

  it("derives the config's tools from the tools' specs, in order", () => {
    const agent = createAgent({ name: 'a', tools: [echo, write] });
    expect(agent.config.tools).toEqual([echo.spec, write.spec]);
    expect(agent.config.tools[0]).toBe(echo.spec);
    expect(agent.tools).toEqual([echo, write]);
  });

  it('has no tools, step or gatherers of its own unless given', () => {
    const agent = createAgent({ name: 'bare' });
    expect(agent.config.tools).toEqual([]);
    expect(agent.tools).toEqual([]);
    expect(agent).not.toHaveProperty('step');
    expect(agent).not.toHaveProperty('contextGatherers');
  });

  it('keeps the context gatherers it is given', () => {
    const gatherers = { page: async () => ({ url: 'about:blank' }) };
    expect(createAgent({ name: 'a', contextGatherers: gatherers }).contextGatherers).toBe(gatherers);
  });

  it('validates the config like defineAgent', () => {
    expect(() => createAgent({ name: 'dup', tools: [echo, echo] })).toThrow('agent "dup" has two tools named "echo"');
    expect(() => createAgent({ name: 'a', maxToolArgsChars: 0 })).toThrow(RangeError);
  });

  it('turns policies into the step the shell runs: the loop with exactly those rules', () => {
    const stopEarly: Policy = {
      name: 'stopEarly',
      beforeStep: ({ state }) =>
        state.step >= 1 ? { reason: 'max_steps', error: { code: 'MAX_STEPS', message: 'one step only' } } : undefined,
    };
    const agent = createAgent({ name: 'a', tools: [echo], policies: [stopEarly] });
    const step = agent.step;
    if (!step) throw new Error('expected a step');
    const [first, effects] = started(agent.config, step);
    expect(ofType(effects, 'callLlm').map((e) => e.id)).toEqual(['llm-1']);
    const [next, after] = step(agent.config, first, {
      type: 'llmResponded',
      effectId: 'llm-1',
      content: '',
      toolCalls: [call('echo', { text: 'x' }, 'e')],
    });
    const [stopped] = step(agent.config, next, { type: 'toolCompleted', effectId: 'running-1-0', output: 'x' });
    expect(ofType(after, 'callTool')).toHaveLength(1);
    expect(stopped).toMatchObject({
      status: 'finished',
      finishReason: 'max_steps',
      error: { code: 'MAX_STEPS', message: 'one step only' },
    });
  });

  it('without the default policies, the step limit is gone too', () => {
    const agent = createAgent({ name: 'a', tools: [echo], policies: [] });
    const step = agent.step;
    if (!step) throw new Error('expected a step');
    const [first] = started(agent.config, step);
    const [next] = step(agent.config, first, {
      type: 'llmResponded',
      effectId: 'llm-1',
      content: '',
      toolCalls: [call('echo', { text: 'x' }, 'e')],
    });
    const [again] = step(agent.config, next, { type: 'toolCompleted', effectId: 'running-1-0', output: 'x' });
    expect(again).toMatchObject({ status: 'awaiting_llm', step: 2 });
    const limited = createAgent({ name: 'a', tools: [echo], policies: [stepLimit(1)] }).step;
    expect(
      limited?.(agent.config, next, { type: 'toolCompleted', effectId: 'running-1-0', output: 'x' })[0],
    ).toMatchObject({ status: 'finished', finishReason: 'max_steps' });
  });

  it('a step of its own wins over policies', () => {
    const own: StepFunction = (_config, state) => [state, []];
    const agent = createAgent({ name: 'a', step: own, policies: [stepLimit(1)] });
    expect(agent.step).toBe(own);
    expect(createAgent({ name: 'a', step: own }).step).toBe(own);
  });
});
