import {
  type AgentState,
  createAgent,
  createOpenAiLlm,
  defaultPolicies,
  resume,
  run,
  terminate,
} from '@openmanus/core';
import { type OpenAiServer, startOpenAiServer, toolSession } from '@openmanus/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createPlanningTool, PLANNING_TOOL } from '../src/planningTool.js';
import { type PlanBook, renderPlan } from '../src/plans.js';

const create = { command: 'create', plan_id: 'trip', title: 'Trip', steps: ['Book flights', 'Pack'] };

describe('the planning tool', () => {
  it('offers OpenManus parameters: only command is required, no other properties allowed', () => {
    const { spec } = createPlanningTool();
    expect(spec.name).toBe('planning');
    expect(spec.parameters).toMatchObject({
      type: 'object',
      required: ['command'],
      additionalProperties: false,
      properties: {
        command: { enum: ['create', 'update', 'list', 'get', 'set_active', 'mark_step', 'delete'] },
        plan_id: { type: 'string' },
        title: { type: 'string' },
        steps: { type: 'array', items: { type: 'string' } },
        step_index: { type: 'integer' },
        step_status: { enum: ['not_started', 'in_progress', 'completed', 'blocked'] },
        step_notes: { type: 'string' },
      },
    });
  });

  it('keeps the plans in the run data across calls, and answers with the rendered plan', async () => {
    const session = toolSession(createPlanningTool());
    const created = await session.call(create);
    expect(created.isError).toBe(false);
    expect(created.output).toContain('Plan created successfully with ID: trip\n\nPlan: Trip (ID: trip)\n');
    const marked = await session.call({ command: 'mark_step', step_index: 0, step_status: 'completed' });
    const book = session.data as PlanBook;
    expect(book.active).toBe('trip');
    expect(book.plans.trip?.steps.map((step) => step.status)).toEqual(['completed', 'not_started']);
    expect(marked).toEqual({
      output: `Step 0 updated in plan 'trip'.\n\n${renderPlan(book.plans.trip as NonNullable<PlanBook['plans'][string]>)}`,
      isError: false,
    });
    expect((await session.call({ command: 'list' })).output).toBe(
      'Available plans:\n• trip (active): Trip - 1/2 steps completed',
    );
    await session.close();
  });

  it('answers a refused command with an error observation and keeps the plans as they were', async () => {
    const session = toolSession(createPlanningTool());
    await session.call(create);
    const before = session.data;
    expect(await session.call(create)).toEqual({
      output: "Error: A plan with ID 'trip' already exists. Use 'update' to change it.",
      isError: true,
    });
    expect(await session.call({ command: 'mark_step', step_index: 5 })).toEqual({
      output: 'Error: Invalid step_index: 5. Valid indices range from 0 to 1.',
      isError: true,
    });
    expect(session.data).toEqual(before);
    await session.close();
  });

  it('rejects arguments outside the schema: an unknown command or status, a stray property', async () => {
    const session = toolSession(createPlanningTool());
    await session.call(create);
    const badStatus = await session.call({ command: 'mark_step', step_index: 0, step_status: 'done' });
    expect(badStatus.isError).toBe(true);
    expect(badStatus.output).toContain('step_status');
    const badCommand = await session.call({ command: 'rename', plan_id: 'trip' });
    expect(badCommand.isError).toBe(true);
    expect(badCommand.output).toContain('command');
    const stray = await session.call({ command: 'get', plan: 'trip' });
    expect(stray.isError).toBe(true);
    expect(stray.output).toContain('plan');
    expect((session.data as PlanBook).plans.trip?.steps[0]?.status).toBe('not_started');
    await session.close();
  });

  it('gives each run its own plans', async () => {
    const tool = createPlanningTool();
    const first = toolSession(tool, { runId: 'A' });
    const second = toolSession(tool, { runId: 'B' });
    await first.call(create);
    expect((await second.call({ command: 'list' })).output).toBe(
      "No plans available. Create a plan with the 'create' command.",
    );
    await Promise.all([first.close(), second.close()]);
  });
});

describe('the planning tool in an agent run', () => {
  let server: OpenAiServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const call = (args: unknown) => ({ toolCalls: [{ name: PLANNING_TOOL, arguments: args }] });
  const decisions = [
    call(create),
    call({ command: 'mark_step', step_index: 0, step_status: 'completed', step_notes: 'booked' }),
    { toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
  ];
  const agent = () =>
    createAgent({
      name: 'planner',
      tools: [createPlanningTool(), terminate],
      policies: defaultPolicies({ maxSteps: 5 }),
    });
  const planIn = (state: AgentState) => (state.toolData?.[PLANNING_TOOL] as PlanBook | undefined)?.plans.trip;

  async function model(script: Parameters<typeof startOpenAiServer>[0]['script'] = decisions) {
    server = await startOpenAiServer({ script });
    return createOpenAiLlm({ model: 'gpt-4o', apiKey: 'k', baseURL: server.baseURL, maxRetries: 0 });
  }

  it('creates a plan, marks a step, and the run state holds the plan', async () => {
    const llm = await model();
    const outcome = await run(agent(), 'Plan my trip', { llm });
    expect(outcome.finishReason).toBe('terminated');
    expect(planIn(outcome.state)?.steps).toEqual([
      { text: 'Book flights', status: 'completed', notes: 'booked' },
      { text: 'Pack', status: 'not_started', notes: '' },
    ]);
    const observations = server?.requests[2]?.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(observations?.[1]).toMatch(
      /^Step 0 updated in plan 'trip'\.\n\n.*\n0\. \[✓\] Book flights\n {3}Notes: booked\n/s,
    );
    server?.assertConsumed();
  });

  it('keeps the plans through a checkpoint and a resume in a new agent', async () => {
    // The model decides from the conversation (its tool results so far), so a resume asks it again.
    const llm = await model((request) => decisions[request.messages.filter((m) => m.role === 'tool').length]);
    let saved = '';
    const first = await run(agent(), 'Plan my trip', {
      llm,
      checkpoint: (state) => {
        // The process "dies" once the model has asked to mark the step.
        if (state.status === 'awaiting_tools' && state.step === 2) throw new Error('killed');
        saved = JSON.stringify(state);
      },
    });
    expect(first.status).toBe('failed');
    expect(planIn(JSON.parse(saved) as AgentState)?.steps[0]?.status).toBe('not_started');

    const resumed = await resume(agent(), JSON.parse(saved), { llm });
    expect(resumed.finishReason).toBe('terminated');
    expect(planIn(resumed.state)?.steps[0]).toEqual({ text: 'Book flights', status: 'completed', notes: 'booked' });
  });
});
