import { createAgent, run } from '@openmanus/core';
import { scriptedLlm } from '@openmanus/core/testing';
import { describe, expect, it } from 'vitest';
import { createPlanningFlow } from '../src/planningFlow.js';
import { agentFinished, runFlow } from '../src/runFlow.js';

const planning = (args: unknown) => ({ toolCalls: [{ name: 'planning', arguments: args }] });

describe("a host's performers", () => {
  it('wrap or replace the flow’s own: model calls through the defaults, executor runs performed elsewhere', async () => {
    const writer = createAgent({ name: 'Writer', description: 'writes' });
    const flow = createPlanningFlow({ agents: { writer } });
    const llm = scriptedLlm([
      planning({ command: 'create', plan_id: 'any', title: 'Notes', steps: ['Draft', 'Polish'] }),
      { content: 'Two passes.' },
    ]);
    // Where the host runs executors: its own model, its own runs.
    const elsewhere = scriptedLlm([{ content: 'Drafted.' }, { content: 'Polished.' }]);
    const performed: string[] = [];

    const outcome = await runFlow(flow, 'Write notes', {
      llm,
      flowId: 'f',
      planId: 'plan_fixed',
      performers: (defaults) => ({
        callLlm: (effect, context) => {
          performed.push(effect.id);
          return defaults.callLlm(effect, context);
        },
        runAgent: async (effect) => {
          performed.push(effect.id);
          const state = effect.state ? { state: effect.state } : {};
          return agentFinished(
            effect,
            await run(writer, effect.prompt, { llm: elsewhere, runId: effect.id, ...state }),
          );
        },
      }),
    });

    expect(outcome).toMatchObject({ status: 'finished', results: ['Drafted.', 'Polished.'] });
    expect(outcome.answer).toBe('Plan completed:\n\nTwo passes.');
    expect(performed).toEqual(['plan-1', 'step-2', 'step-3', 'summary-4']);
    expect(llm.requests).toHaveLength(2);
    expect(elsewhere.requests).toHaveLength(2);
    // The plan is under the id given, and the model was asked for that one.
    expect(outcome.state.planId).toBe('plan_fixed');
    expect(outcome.plan.steps.map((step) => step.status)).toEqual(['completed', 'completed']);
    expect(String(llm.requests[0]?.messages.at(-1)?.content)).toContain('as plan "plan_fixed"');
    // The second run continued the first's memory; its report counts its own model call only.
    expect(elsewhere.requests[1]?.messages.map((m) => m.content)).toContain('Drafted.');
    expect(outcome.usage.llmCalls).toBe(4);
  });
});
