import { describe, expect, it } from 'vitest';
import type { FlowEffect } from '../src/flowState.js';
import { InvalidFlowEventError, initialFlowState, planOf, routeStep, verdictOf } from '../src/flowStep.js';
import { createPlanningFlow, type PlanningFlowOptions } from '../src/planningFlow.js';
import { renderPlan } from '../src/plans.js';
import {
  asks,
  create,
  executor,
  executorRun,
  FlowDriver,
  flails,
  noUsage,
  observations,
  PLAN_ID,
  planning,
  says,
  terminates,
  workOf,
} from './flowHelpers.js';

const manus = executor('Manus', 'A versatile agent for any task');
const analyst = executor('DataAnalysis', 'Analyses data and draws charts');

const twoAgents = (options: Partial<PlanningFlowOptions> = {}) =>
  createPlanningFlow({ agents: { manus, data_analysis: analyst }, ...options });
const oneAgent = (options: Partial<PlanningFlowOptions> = {}) => createPlanningFlow({ agents: manus, ...options });
const driver = (options: Partial<PlanningFlowOptions> = {}) => new FlowDriver(twoAgents(options));

const llmCall = (effects: readonly FlowEffect[]) => {
  const work = workOf(effects);
  if (work.type !== 'callLlm') throw new Error(`expected a model call, got ${work.type}`);
  return work;
};
const agentRun = (effects: readonly FlowEffect[]) => {
  const work = workOf(effects);
  if (work.type !== 'runAgent') throw new Error(`expected an executor run, got ${work.type}`);
  return work;
};
const systemPrompt = (effects: readonly FlowEffect[]) => llmCall(effects).request.messages[0]?.content ?? '';
const userPrompt = (effects: readonly FlowEffect[]) => llmCall(effects).request.messages[1]?.content ?? '';
const statuses = (d: FlowDriver) => d.steps.map((s) => s.status);

describe('started', () => {
  it('plans: one model call that must call the planning tool and nothing else', () => {
    const d = new FlowDriver(twoAgents({ profile: 'planner' }));
    d.on({ type: 'started', input: 'Compare the rainfall of Kyoto and Osaka', planId: PLAN_ID, flowId: 'f1' });
    expect(d.state).toMatchObject({
      status: 'planning',
      input: 'Compare the rainfall of Kyoto and Osaka',
      flowId: 'f1',
    });
    expect(d.state.planId).toBe(PLAN_ID);
    expect(d.effects).toHaveLength(1);
    const effect = llmCall(d.effects);
    expect(effect).toMatchObject({ id: 'plan-1', purpose: 'plan' });
    expect(effect.request.toolChoice).toBe('required');
    expect(effect.request.profile).toBe('planner');
    expect(effect.request.tools.map((t) => t.name)).toEqual(['planning']);
    expect(effect.request.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(userPrompt(d.effects)).toContain(`"${PLAN_ID}"`);
    expect(userPrompt(d.effects)).toContain('Compare the rainfall of Kyoto and Osaka');
    expect(d.state.awaiting).toEqual(effect);
  });

  it('lists the executors, upper-cased with their descriptions, and asks for [AGENT] labels when there are several', () => {
    const system = systemPrompt(driver().start().effects);
    expect(system).toContain('- MANUS: A versatile agent for any task');
    expect(system).toContain('- DATA_ANALYSIS: Analyses data and draws charts');
    expect(system).toMatch(/\[MANUS\] /);
  });

  it('an agent without a description is listed by its name', () => {
    const flow = createPlanningFlow({ agents: { manus, helper: executor('Helper') } });
    expect(systemPrompt(new FlowDriver(flow).start().effects)).toContain('- HELPER: Helper');
  });

  it('asks for no labels with one executor, even when the flow has other agents', () => {
    for (const flow of [oneAgent(), twoAgents({ executors: ['data_analysis'] })]) {
      const system = systemPrompt(new FlowDriver(flow).start().effects);
      expect(system).toMatch(/planning assistant/);
      expect(system).not.toMatch(/MANUS|DATA_ANALYSIS|\[/);
    }
  });

  it('starts once', () => {
    const d = driver().start();
    expect(() => d.start()).toThrow(InvalidFlowEventError);
  });
});

describe('the plan', () => {
  it('a create call makes the plan under the flow’s id, marks the first step and runs it', () => {
    const d = driver()
      .start()
      .respond('', [
        planning({ command: 'create', plan_id: 'elsewhere', title: 'Rain', steps: ['Find data', 'Compare'] }),
      ]);
    expect(Object.keys(d.state.plans.plans)).toEqual([PLAN_ID]);
    expect(planOf(d.state)).toMatchObject({ id: PLAN_ID, title: 'Rain' });
    expect(d.steps.map((s) => s.text)).toEqual(['Find data', 'Compare']);
    expect(statuses(d)).toEqual(['in_progress', 'not_started']);
    expect(d.state.status).toBe('running');
    expect(d.state.current).toEqual({ index: 0, executor: 'manus', attempt: 1 });
    expect(d.effects).toHaveLength(1);
    const run = agentRun(d.effects);
    expect(run).toMatchObject({ id: 'step-2', executor: 'manus', stepIndex: 0 });
    expect(run.prompt).toContain(renderPlan(planOf(d.state)));
    expect(run.prompt).toContain('[→] Find data');
    expect(run.prompt).toContain('step 0: "Find data"');
    expect(d.state.awaiting).toEqual(run);
  });

  const fallbacks: [string, ReturnType<typeof planning>[], RegExp][] = [
    ['unparsable arguments', [planning('{"command": "create", "steps": [')], /not JSON/],
    ['invalid arguments', [planning({ command: 'create', title: 'T', steps: 'Find data' })], /invalid: steps/],
    ['an unknown parameter', [planning({ command: 'create', title: 'T', steps: ['a'], owner: 'x' })], /invalid/],
    ['the wrong command', [planning({ command: 'list' })], /"list" instead of "create"/],
    ['another tool', [{ id: 'b', name: 'browser_use', arguments: '{}' }], /called "browser_use"/],
    ['no call', [], /did not call the planning tool/],
    ['empty steps', [create([])], /non-empty/],
    ['no title', [planning({ command: 'create', steps: ['a'] })], /refused: .*title/],
  ];
  it.each(fallbacks)('%s: OpenManus’s fallback plan, with why', (_name, calls, reason) => {
    const d = driver().start('Compare the rainfall of Kyoto and Osaka').respond('I would rather not', calls);
    expect(planOf(d.state).title).toBe('Plan for: Compare the rainfall of Kyoto and Osaka');
    expect(d.steps.map((s) => s.text)).toEqual(['Analyze request', 'Execute task', 'Verify results']);
    expect(statuses(d)).toEqual(['in_progress', 'not_started', 'not_started']);
    const [note] = observations(d.effects);
    expect(note?.kind).toBe('planFallback');
    expect(note && 'reason' in note ? note.reason : '').toMatch(reason);
    expect(agentRun(d.effects)).toMatchObject({ executor: 'manus', stepIndex: 0 });
  });

  it('the fallback title cuts the task at 50 characters, with "..." only when cut', () => {
    const fifty = 'x'.repeat(50);
    const cut = driver().start(`${fifty}yz`).respond('');
    expect(planOf(cut.state).title).toBe(`Plan for: ${fifty}...`);
    const whole = driver().start(fifty).respond('');
    expect(planOf(whole.state).title).toBe(`Plan for: ${fifty}`);
  });

  it('the first usable call among several wins', () => {
    const d = driver()
      .start()
      .respond('', [
        { id: 'x', name: 'browser_use', arguments: '{}' },
        planning('{oops', 'a'),
        planning({ command: 'get' }, 'b'),
        create(['First plan step'], 'mine'),
        create(['Second plan step']),
      ]);
    expect(d.steps.map((s) => s.text)).toEqual(['First plan step']);
    expect(observations(d.effects)).toEqual([]);
  });

  it('a failed planning request ends the flow with a clear error', () => {
    const d = driver().start().llmFails('HTTP 503: overloaded');
    expect(d.state).toMatchObject({ status: 'failed', finishReason: 'error' });
    expect(d.state.error).toEqual({ code: 'LLM_OVERLOADED', message: 'could not make a plan: HTTP 503: overloaded' });
    expect(d.state.awaiting).toBeUndefined();
    expect(d.effects).toEqual([]);
  });
});

describe('routing', () => {
  const { config } = twoAgents();
  it('follows the step’s label in any case, else the first executor', () => {
    expect(routeStep(config, '[data_analysis] Chart the rainfall')).toBe('data_analysis');
    expect(routeStep(config, '[DATA_ANALYSIS] Chart the rainfall')).toBe('data_analysis');
    expect(routeStep(config, 'Then [Data_Analysis] charts it')).toBe('data_analysis');
    expect(routeStep(config, '[CHEF] Cook dinner')).toBe('manus');
    expect(routeStep(config, 'Write the report')).toBe('manus');
  });

  it('defaults to the first executor, and a label may name any agent of the flow', () => {
    const { config } = twoAgents({ executors: ['data_analysis'] });
    expect(routeStep(config, 'Chart the rainfall')).toBe('data_analysis');
    expect(routeStep(config, '[MANUS] Write the report')).toBe('manus');
  });

  it('routes to agents given as a list by the labels the planner is told to use', () => {
    const flow = createPlanningFlow({ agents: [manus, analyst] });
    const system = systemPrompt(new FlowDriver(flow).start().effects);
    expect(system).toContain('- AGENT_1: Analyses data and draws charts');
    expect(routeStep(flow.config, '[AGENT_1] Chart the rainfall')).toBe('agent_1');
    expect(routeStep(flow.config, '[agent_0] Write the report')).toBe('agent_0');
    const hyphened = createPlanningFlow({ agents: { manus, 'web-search': executor('Search') } }).config;
    expect(routeStep(hyphened, '[WEB-SEARCH] Find sources')).toBe('web-search');
  });

  it('each step of the plan goes to its executor', () => {
    const d = driver().plan(['[DATA_ANALYSIS] Chart the rainfall', '[manus] Write the report', 'Proofread']);
    expect(agentRun(d.effects).executor).toBe('data_analysis');
    d.run(says('Charted.'));
    expect(agentRun(d.effects).executor).toBe('manus');
    d.run(says('Written.'));
    expect(agentRun(d.effects)).toMatchObject({ executor: 'manus', stepIndex: 2 });
  });
});

describe('verdicts', () => {
  it('an answered step is completed with its answer, and the next step is taken', () => {
    const d = driver().plan(['Find data', 'Compare']).run(says('  Found 30 years of data.  '));
    expect(statuses(d)).toEqual(['completed', 'in_progress']);
    expect(d.state.results).toEqual(['Found 30 years of data.']);
    expect(d.state.current).toEqual({ index: 1, executor: 'manus', attempt: 1 });
    const run = agentRun(d.effects);
    expect(run).toMatchObject({ id: 'step-3', stepIndex: 1 });
    expect(run.prompt).toContain('[✓] Find data');
    expect(run.prompt).not.toContain('earlier attempt');
  });

  it('terminating with success completes the step', () => {
    const d = driver().plan(['Find data', 'Compare']).run(terminates('success', 'Got it.'));
    expect(statuses(d)).toEqual(['completed', 'in_progress']);
    expect(d.state.results).toEqual(['Got it.']);
  });

  it('terminating with failure blocks the step at once, the reason in its notes', () => {
    const d = driver({ maxAttempts: 3 }).plan(['Find data', 'Compare']).run(terminates('failure', 'No data exists.'));
    expect(d.steps[0]).toMatchObject({ status: 'blocked', notes: 'No data exists.' });
    expect(observations(d.effects)).toEqual([{ kind: 'stepBlocked', index: 0, reason: 'No data exists.' }]);
    expect(d.state.results).toEqual(['Step 0 blocked: No data exists.']);
    expect(agentRun(d.effects).stepIndex).toBe(1);
  });

  it('a failure terminate of an earlier task does not make a later step fail', () => {
    const d = driver().plan(['Find data', 'Compare']).run(terminates('failure', 'No data.'));
    const run = agentRun(d.effects);
    expect(run.state?.messages.some((m) => m.role === 'assistant' && m.toolCalls?.[0]?.name === 'terminate')).toBe(
      true,
    );
    d.run(terminates('success', 'Compared what there was.'));
    expect(statuses(d)).toEqual(['blocked', 'completed']);
  });

  const failures: [string, () => FlowDriver, RegExp][] = [
    ['a failed run', () => driver().plan(['Find data', 'Compare']).run({ error: 'HTTP 500' }), /HTTP 500/],
    ['the step limit', () => driver().plan(['Find data', 'Compare']).run(flails(1), flails(2)), /step limit \(2\)/],
    ['a paused run', () => driver().plan(['Find data', 'Compare']).run(asks('Which city?')), /waiting for a person/],
    ['a run that could not start', () => driver().plan(['Find data', 'Compare']).runFails('no sandbox'), /no sandbox/],
  ];
  it.each(failures)('%s is retried, the prompt saying why, then the step is blocked', (_name, first, reason) => {
    const d = first();
    expect(statuses(d)).toEqual(['in_progress', 'not_started']);
    const [retried] = observations(d.effects);
    expect(retried).toMatchObject({ kind: 'stepRetried', index: 0, attempt: 2 });
    expect(retried && 'reason' in retried ? retried.reason : '').toMatch(reason);
    const retry = agentRun(d.effects);
    expect(retry).toMatchObject({ id: 'step-3', executor: 'manus', stepIndex: 0 });
    expect(retry.prompt).toMatch(/An earlier attempt at this step failed: .*Try another way/);
    expect(d.state.current).toMatchObject({ index: 0, attempt: 2 });

    d.run({ error: 'HTTP 502' });
    expect(d.steps[0]).toMatchObject({ status: 'blocked', notes: 'the model request failed: HTTP 502' });
    expect(observations(d.effects)).toEqual([
      { kind: 'stepBlocked', index: 0, reason: 'the model request failed: HTTP 502' },
    ]);
    expect(agentRun(d.effects).stepIndex).toBe(1);
  });

  it('running out of the token budget is a failed attempt', () => {
    const frugal = executor('Frugal', 'Tiny budget', { maxInputTokens: 3 });
    const d = new FlowDriver(createPlanningFlow({ agents: { frugal }, maxAttempts: 1 })).plan(['Find data']).run();
    expect(d.steps[0]?.status).toBe('blocked');
    expect(d.steps[0]?.notes).toMatch(/more than the limit of 3/);
  });

  it('runs a step at most maxAttempts times', () => {
    const d = driver({ maxAttempts: 3 }).plan(['Find data', 'Compare']);
    const runs: string[] = [];
    while (agentRun(d.effects).stepIndex === 0) {
      runs.push(agentRun(d.effects).id);
      d.run({ error: 'HTTP 500' });
    }
    expect(runs).toEqual(['step-2', 'step-3', 'step-4']);
    expect(d.steps[0]?.status).toBe('blocked');
  });

  it('judges reports: done, failed or given up', () => {
    const report = (replies: Parameters<typeof executorRun>[2]) => executorRun(manus, 'task', replies);
    expect(verdictOf(report([says('Done.')]))).toEqual({ kind: 'done', answer: 'Done.' });
    expect(verdictOf({ ...report([terminates('success')]), answer: ' ' })).toEqual({
      kind: 'done',
      answer: '(the step ended without an answer)',
    });
    expect(verdictOf({ ...report([terminates('failure')]), answer: '' })).toEqual({
      kind: 'gaveUp',
      reason: 'the executor ended its task with status failure',
    });
    // A later terminate call of the same task decides.
    expect(
      verdictOf(
        report([
          {
            text: 'Retracted.',
            calls: [
              { name: 'terminate', args: { status: 'failure' } },
              { name: 'terminate', args: { status: 'success' } },
            ],
          },
        ]),
      ).kind,
    ).toBe('done');
    expect(verdictOf(report([{ error: 'HTTP 500' }]))).toEqual({
      kind: 'failed',
      reason: 'the model request failed: HTTP 500',
    });
  });
});

describe('when a step is blocked', () => {
  const blockFirst = (options: Partial<PlanningFlowOptions>) =>
    driver(options).plan(['Find data', 'Compare', 'Write']).run(terminates('failure', 'The archive is offline.'));

  it('continue: the next step is taken', () => {
    const d = blockFirst({ whenBlocked: 'continue' });
    expect(statuses(d)).toEqual(['blocked', 'in_progress', 'not_started']);
    expect(agentRun(d.effects).stepIndex).toBe(1);
  });

  it('stop: the flow ends, naming the step and the reason, and does nothing more', () => {
    const d = driver({ whenBlocked: 'stop' }).plan(['Find data', 'Compare', 'Write']).run(says('Found.'));
    d.run(terminates('failure', 'Nothing to compare.'));
    expect(d.state).toMatchObject({ status: 'finished', finishReason: 'stopped' });
    expect(d.state.error).toEqual({
      code: 'STEP_BLOCKED',
      message: 'step 1 ("Compare") is blocked: Nothing to compare.',
    });
    expect(d.state.answer).toBe('Found.\nStep 1 blocked: Nothing to compare.');
    expect(d.state.awaiting).toBeUndefined();
    expect(d.effects).toEqual([
      { type: 'emit', observation: { kind: 'stepBlocked', index: 1, reason: 'Nothing to compare.' } },
    ]);
  });

  it('replan: asks the model to change the plan, showing it and the blocked step', () => {
    const d = blockFirst({ whenBlocked: 'replan', profile: 'planner' });
    expect(d.state).toMatchObject({ status: 'replanning', replans: 1 });
    expect(d.state.blocked).toEqual({ index: 0, reason: 'The archive is offline.' });
    expect(d.state.current).toBeUndefined();
    expect(observations(d.effects)).toEqual([{ kind: 'stepBlocked', index: 0, reason: 'The archive is offline.' }]);
    const effect = llmCall(d.effects);
    expect(effect).toMatchObject({ id: 'replan-3', purpose: 'replan' });
    expect(effect.request).toMatchObject({ toolChoice: 'required', profile: 'planner' });
    expect(effect.request.tools.map((t) => t.name)).toEqual(['planning']);
    expect(userPrompt(d.effects)).toContain(renderPlan(planOf(d.state)));
    expect(userPrompt(d.effects)).toContain('[!] Find data');
    expect(userPrompt(d.effects)).toContain('Step 0 could not be done: The archive is offline.');
  });

  it('replan: an update changes the plan; steps that keep their text and place keep their status', () => {
    const d = driver({ whenBlocked: 'replan' }).plan(['Find data', 'Compare', 'Write']).run(says('Found.'));
    d.run(terminates('failure', 'Units differ.'));
    d.respond('', [
      planning({ command: 'update', plan_id: 'other', steps: ['Find data', 'Convert units', 'Compare', 'Write'] }),
    ]);
    expect(Object.keys(d.state.plans.plans)).toEqual([PLAN_ID]);
    expect(d.steps.map((s) => [s.text, s.status])).toEqual([
      ['Find data', 'completed'],
      ['Convert units', 'in_progress'],
      ['Compare', 'not_started'],
      ['Write', 'not_started'],
    ]);
    expect(d.state.blocked).toBeUndefined();
    expect(d.state.status).toBe('running');
    expect(agentRun(d.effects)).toMatchObject({ stepIndex: 1 });
    expect(agentRun(d.effects).prompt).toContain('step 1: "Convert units"');
  });

  it('replan: a create call counts as an update of the flow’s plan', () => {
    const d = blockFirst({ whenBlocked: 'replan' });
    d.respond('', [create(['Find data in the mirror', 'Compare'], 'new_plan', 'New')]);
    expect(Object.keys(d.state.plans.plans)).toEqual([PLAN_ID]);
    expect(d.steps.map((s) => [s.text, s.status])).toEqual([
      ['Find data in the mirror', 'in_progress'],
      ['Compare', 'not_started'],
    ]);
  });

  const kept: [string, (d: FlowDriver) => FlowDriver, RegExp][] = [
    ['no call', (d) => d.respond('I cannot help.'), /did not call the planning tool/],
    ['the wrong command', (d) => d.respond('', [planning({ command: 'delete', plan_id: PLAN_ID })]), /"delete"/],
    ['a failed request', (d) => d.llmFails('HTTP 503'), /the replanning request failed: HTTP 503/],
  ];
  it.each(kept)('replan: %s keeps the plan, with why, and goes on', (_name, answer, reason) => {
    const d = blockFirst({ whenBlocked: 'replan' });
    const before = d.steps;
    answer(d);
    expect(d.steps.map((s) => s.text)).toEqual(before.map((s) => s.text));
    expect(statuses(d)).toEqual(['blocked', 'in_progress', 'not_started']);
    const [note] = observations(d.effects);
    expect(note?.kind).toBe('planKept');
    expect(note && 'reason' in note ? note.reason : '').toMatch(reason);
    expect(agentRun(d.effects).stepIndex).toBe(1);
    expect(d.state.blocked).toBeUndefined();
  });

  it('replan at most maxReplans times, then go on as with continue', () => {
    const d = driver({ whenBlocked: 'replan', maxReplans: 1 }).plan(['Find data', 'Compare']);
    d.run(terminates('failure', 'Offline.')).respond('I cannot help.');
    d.run(terminates('failure', 'Still offline.'));
    expect(d.state.replans).toBe(1);
    expect(statuses(d)).toEqual(['blocked', 'blocked']);
    expect(llmCall(d.effects).purpose).toBe('summary');
    expect(observations(d.effects)).toEqual([{ kind: 'stepBlocked', index: 1, reason: 'Still offline.' }]);
  });

  it('maxReplans 0 never replans', () => {
    const d = blockFirst({ whenBlocked: 'replan', maxReplans: 0 });
    expect(d.state.replans).toBe(0);
    expect(agentRun(d.effects).stepIndex).toBe(1);
  });
});

describe('executors between steps', () => {
  it('every step is a new run with a fresh step budget; with memory kept, on the executor’s last state', () => {
    const d = driver().plan(['Find data', 'Compare']);
    expect(agentRun(d.effects).state).toBeUndefined();
    // Each run needs both of the executor's two steps: the second would fail if the budget leaked.
    d.run(flails(1), says('Found.'));
    const first = d.state.memory.manus;
    expect(first?.status).toBe('finished');
    const second = agentRun(d.effects);
    expect(second.state).toBe(first);
    d.run(flails(2), says('Compared.'));
    expect(statuses(d)).toEqual(['completed', 'completed']);
    const memory = d.state.memory.manus;
    expect(memory?.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      expect.stringContaining('step 0: "Find data"'),
      expect.stringContaining('step 1: "Compare"'),
    ]);
  });

  it('keeps each executor’s memory under its own key', () => {
    const d = driver().plan(['[MANUS] Find data', '[DATA_ANALYSIS] Chart it', '[MANUS] Write']);
    d.run(says('Found.'));
    expect(agentRun(d.effects).state).toBeUndefined();
    d.run(says('Charted.'));
    expect(Object.keys(d.state.memory).sort()).toEqual(['data_analysis', 'manus']);
    expect(agentRun(d.effects).state).toBe(d.state.memory.manus);
  });

  it('with memory cleared, every step starts from an empty history', () => {
    const d = driver({ executorMemory: 'clear' }).plan(['Find data', 'Compare']).run(says('Found.'));
    expect(d.state.memory).toEqual({});
    expect(agentRun(d.effects).state).toBeUndefined();
    d.run({ error: 'HTTP 500' });
    expect(agentRun(d.effects).state).toBeUndefined();
  });

  it('a paused run is not kept as memory: the retry and later steps can start', () => {
    const d = driver().plan(['Find data', 'Compare']).run(says('Found.'));
    const before = d.state.memory.manus;
    d.run(asks('Which years?'));
    expect(d.state.memory.manus).toBe(before);
    expect(agentRun(d.effects).state).toBe(before);
    d.run(says('Compared 1990-2020.'));
    expect(statuses(d)).toEqual(['completed', 'completed']);
  });
});

describe('usage', () => {
  it('adds the flow’s own model calls and every executor run', () => {
    const d = driver()
      .start()
      .respond('', [create(['Find data', 'Compare'])], { inputTokens: 50, outputTokens: 5 });
    expect(d.state.usage).toEqual({ inputTokens: 50, outputTokens: 5, llmCalls: 1 });
    d.run(flails(1), says('Found.'));
    expect(d.state.usage).toEqual({ inputTokens: 250, outputTokens: 25, llmCalls: 3 });
    d.run(says('Compared.')); // on the first run's state: only this run's usage counts
    expect(d.state.usage).toEqual({ inputTokens: 350, outputTokens: 35, llmCalls: 4 });
    d.llmFails();
    expect(d.state.usage).toEqual({ inputTokens: 350, outputTokens: 35, llmCalls: 5 });
    d.run(says('Summary.'));
    expect(d.state.usage).toEqual({ inputTokens: 450, outputTokens: 45, llmCalls: 6 });
    expect(d.state.finishReason).toBe('completed');
  });

  it('a model answer without usage counts the call only', () => {
    const d = driver()
      .start()
      .respond('', [create(['Find data'])]);
    expect(d.state.usage).toEqual({ ...noUsage, llmCalls: 1 });
  });
});

describe('the summary', () => {
  const allDone = (options: Partial<PlanningFlowOptions> = {}) =>
    driver(options).plan(['Find data', 'Compare']).run(says('Found.')).run(says('Kyoto is wetter.'));

  it('when no step is left, the model sums up, with no tools', () => {
    const d = allDone({ profile: 'planner' });
    expect(d.state.status).toBe('summarising');
    expect(d.state.current).toBeUndefined();
    const effect = llmCall(d.effects);
    expect(effect).toMatchObject({ id: 'summary-4', purpose: 'summary' });
    expect(effect.request).toMatchObject({ tools: [], toolChoice: 'none', profile: 'planner' });
    expect(userPrompt(d.effects)).toContain(renderPlan(planOf(d.state)));
    expect(userPrompt(d.effects)).toContain('--- 1 ---\nFound.\n--- 2 ---\nKyoto is wetter.');
  });

  it('cuts a step’s long result in the summary request', () => {
    const d = driver()
      .plan(['Find data'])
      .run(says('y'.repeat(5000)));
    expect(userPrompt(d.effects)).toContain(`${'y'.repeat(2000)} […cut]`);
    expect(userPrompt(d.effects)).not.toContain('y'.repeat(2001));
  });

  it('the model’s summary ends the flow', () => {
    const d = allDone().respond('  Kyoto gets more rain.  ');
    expect(d.state).toMatchObject({
      status: 'finished',
      finishReason: 'completed',
      answer: 'Plan completed:\n\nKyoto gets more rain.',
    });
    expect(d.state.awaiting).toBeUndefined();
    expect(d.effects).toEqual([]);
  });

  it.each([
    ['an empty summary', (d: FlowDriver) => d.respond('   ')],
    ['a failed summary request', (d: FlowDriver) => d.llmFails()],
  ])('%s: the primary agent writes it', (_name, answer) => {
    const d = answer(allDone({ executors: ['data_analysis'] }));
    expect(d.state.status).toBe('summarising');
    const run = agentRun(d.effects);
    expect(run).toMatchObject({ id: 'summary-5', executor: 'manus' });
    expect(run.stepIndex).toBeUndefined();
    expect(run.prompt).toContain('Sum up what was accomplished');
    expect(run.prompt).toContain('Kyoto is wetter.');
    d.run(says('Kyoto is the wetter city.'));
    expect(d.state).toMatchObject({
      status: 'finished',
      finishReason: 'completed',
      answer: 'Plan completed:\n\nKyoto is the wetter city.',
    });
  });

  it.each([
    ['its run fails', (d: FlowDriver) => d.run({ error: 'HTTP 500' })],
    ['its run cannot start', (d: FlowDriver) => d.runFails()],
  ])('when %s: "Plan completed. Error generating summary."', (_name, fail) => {
    const d = fail(allDone().llmFails());
    expect(d.state).toMatchObject({
      status: 'finished',
      finishReason: 'completed',
      answer: 'Plan completed. Error generating summary.',
    });
    expect(d.effects).toEqual([]);
  });
});

describe('interruptions and stale answers', () => {
  it.each([
    [
      { type: 'timedOut', afterMs: 3_600_000 } as const,
      'finished',
      'timeout',
      { code: 'FLOW_TIMEOUT', message: 'the flow ran out of time (3600 s)' },
    ],
    [
      { type: 'cancelled', reason: 'the user left' } as const,
      'finished',
      'cancelled',
      { code: 'CANCELLED', message: 'the user left' },
    ],
    [
      { type: 'faulted', error: { code: 'INTERNAL', message: 'the store is full' } } as const,
      'failed',
      'error',
      { code: 'INTERNAL', message: 'the store is full' },
    ],
  ])('%o mid-step ends the flow, and the step’s late answer changes nothing', (event, status, reason, error) => {
    const d = driver().plan(['Find data', 'Compare']).run(says('Found.'));
    const step = agentRun(d.effects);
    d.on(event);
    expect(d.state).toMatchObject({ status, finishReason: reason, error, answer: 'Found.' });
    expect(d.state.awaiting).toBeUndefined();
    expect(d.effects).toEqual([]);
    const ended = d.state;
    const late = executorRun(manus, step.prompt, [says('Compared.')], step.state);
    expect(d.flow.step(ended, { type: 'agentFinished', effectId: step.id, report: late })).toEqual([ended, []]);
    expect(d.flow.step(ended, { type: 'timedOut', afterMs: 1 })[0]).toBe(ended);
    expect(d.flow.step(ended, { type: 'cancelled', reason: 'again' })[0]).toBe(ended);
  });

  it('answers to anything but the awaited effect change nothing', () => {
    const d = driver().plan(['Find data', 'Compare']);
    const state = d.state;
    const report = executorRun(manus, 'x', [says('Done.')]);
    const stale = [
      { type: 'agentFinished', effectId: 'step-9', report },
      { type: 'agentFinished', effectId: 'plan-1', report },
      { type: 'agentFailed', effectId: 'step-1', error: 'x' },
      { type: 'llmResponded', effectId: 'step-2', content: 'Summary', toolCalls: [] },
      { type: 'llmResponded', effectId: 'plan-1', content: '', toolCalls: [create(['Again'])] },
      { type: 'llmFailed', effectId: 'step-2', error: { code: 'LLM_SERVER', message: 'x' } },
    ] as const;
    for (const event of stale) {
      const [next, effects] = d.flow.step(state, event);
      expect(next).toBe(state);
      expect(effects).toEqual([]);
    }
  });
});

describe('resumed', () => {
  it('re-issues exactly the awaited step, with the executor’s memory as before the step', () => {
    const d = driver().plan(['Find data', 'Compare']).run(says('Found.'));
    const issued = d.effects;
    const state = d.state;
    const [next, effects] = d.flow.step(state, { type: 'resumed' });
    expect(next).toBe(state);
    expect(effects).toEqual(issued);
    expect(agentRun(effects).state).toBe(state.memory.manus);
  });

  it('re-issues a model call with the same id, and names a flow that had no id', () => {
    const d = driver().start();
    const [next, effects] = d.flow.step(d.state, { type: 'resumed', flowId: 'f9' });
    expect(next.flowId).toBe('f9');
    expect(effects).toEqual(d.effects);
    expect(llmCall(effects).id).toBe('plan-1');
  });

  it('on a final state does nothing; on an idle one it throws', () => {
    const ended = driver().start().llmFails().state;
    expect(driver().flow.step(ended, { type: 'resumed' })).toEqual([ended, []]);
    expect(() => driver().flow.step(initialFlowState(), { type: 'resumed' })).toThrow(InvalidFlowEventError);
  });
});

describe('createPlanningFlow', () => {
  it('takes one agent as "default", a list as agent_0…, an object by its keys, the first as primary', () => {
    expect(createPlanningFlow({ agents: manus }).config).toMatchObject({
      agents: [{ key: 'default', name: 'Manus', description: 'A versatile agent for any task' }],
      executors: ['default'],
    });
    const listed = createPlanningFlow({ agents: [manus, analyst] });
    expect(listed.config.agents.map((a) => a.key)).toEqual(['agent_0', 'agent_1']);
    expect(listed.agents.agent_1).toBe(analyst);
    const keyed = createPlanningFlow({ agents: { data_analysis: analyst, manus }, executors: ['manus'] });
    expect(keyed.config.agents.map((a) => [a.key, a.name])).toEqual([
      ['data_analysis', 'DataAnalysis'],
      ['manus', 'Manus'],
    ]);
    expect(keyed.config.executors).toEqual(['manus']);
  });

  it('has OpenManus’s defaults', () => {
    expect(createPlanningFlow({ agents: manus }).config).toMatchObject({
      maxAttempts: 2,
      whenBlocked: 'continue',
      maxReplans: 2,
      executorMemory: 'keep',
      timeoutMs: 3_600_000,
      planningTool: { name: 'planning' },
    });
    expect(createPlanningFlow({ agents: manus }).config.profile).toBeUndefined();
  });

  it.each([
    [{ agents: {} }, /at least one agent/],
    [{ agents: [] }, /at least one agent/],
    [{ agents: { manus, other: { name: 'x' } } }, /agents\.other is not an agent/],
    [{ agents: { manus }, executors: ['manus', 'chef'] }, /unknown executors: chef \(the agents are manus\)/],
    [{ agents: { manus }, executors: [] }, /at least one executor/],
    [{ agents: manus, whenBlocked: 'retry' }, /whenBlocked must be/],
    [{ agents: manus, executorMemory: 'forget' }, /executorMemory must be/],
    [{ agents: manus, maxAttempts: 0 }, /maxAttempts must be an integer of at least 1, not 0/],
    [{ agents: manus, maxAttempts: 1.5 }, /maxAttempts must be an integer/],
    [{ agents: manus, maxReplans: -1 }, /maxReplans must be an integer of at least 0/],
    [{ agents: manus, timeoutMs: 0 }, /timeoutMs must be/],
  ])('refuses %o', (options, message) => {
    expect(() => createPlanningFlow(options as unknown as PlanningFlowOptions)).toThrow(message);
  });
});
