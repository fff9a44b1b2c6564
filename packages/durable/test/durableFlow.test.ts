import { createOpenAiLlm } from '@openmanus/core';
import type { RecordedRequest } from '@openmanus/core/testing';
import { createPlanningFlow, type FlowOutcome, runFlow } from '@openmanus/flow';
import { describe, expect, it } from 'vitest';
import { type DurableClient, RunCancelledError } from '../src/client.js';
import { generateDecisionKey } from '../src/decisions.js';
import type { FlowEventItem } from '../src/durableFlow.js';
import { startWorker } from '../src/worker.js';
import { testAgents } from './agents.mjs';
import { flowAgents } from './flowAgents.mjs';
import { flowScript, promptOf, purposeOf, stepTextOf } from './flowScript.js';
import { durableHarness, until } from './harness.js';
import { noteReply, taskOf, turnsDone } from './scriptedNotes.js';
import { stallOnce } from './stallOnce.js';

const harness = durableHarness();

const TASK = 'Plan a day of temples in Kyoto';
const STEPS = ['[RESEARCHER] Pick three temples', '[WRITER] Write the itinerary'];
const ANSWERS = ['Fushimi Inari, Kiyomizu-dera, Kinkaku-ji.', 'Dawn at Fushimi Inari, sunset at Kinkaku-ji.'];
const SUMMARY = 'A one-day route through three temples.';

/** The model's decisions for the flow: a two-step plan, an answer per step, the summary. */
const flowReply = flowScript({
  plan: () => ({ id: 'temples', title: 'A day in Kyoto', steps: STEPS }),
  step: (request) => ({ content: ANSWERS[Number(purposeOf(request).slice('step '.length))] ?? '' }),
  summary: SUMMARY,
});

/** The same flow run in this process by `runFlow`, on its own model server with the same script. */
async function inProcess(flowId: string, planId: string): Promise<FlowOutcome> {
  const server = await harness.server({ script: flowReply });
  const llm = createOpenAiLlm({ model: 'scripted-model', apiKey: 'test', baseURL: server.baseURL, maxRetries: 0 });
  const flow = createPlanningFlow({ agents: flowAgents() });
  return runFlow(flow, TASK, { llm, flowId, planId });
}

/** Every item of the flow's stream as `source type effectId`. */
async function itemsOf(durable: DurableClient, flowId: string): Promise<string[]> {
  const lines: string[] = [];
  const label = (item: FlowEventItem) => {
    const event = item.type === 'flow' ? item.event : item.item.event;
    const source = item.type === 'flow' ? 'flow' : `${item.executor}@${item.runId}`;
    return `${source} ${event.type}${'effectId' in event ? ` ${event.effectId}` : ''}`;
  };
  for await (const item of durable.streamFlowEvents(flowId)) lines.push(label(item));
  return lines;
}

describe('a planning flow as a durable workflow', () => {
  it('runs each step as a child run and ends as runFlow does in process', async () => {
    const server = await harness.server({ script: flowReply });
    await harness.worker('flow-worker', server.baseURL, await harness.toolLog('flow')).ready;
    const durable = await harness.client();

    const flowId = await durable.enqueueFlow({ flowId: 'trip', flow: 'day-trip', input: TASK });
    const outcome = await durable.waitForFlow(flowId);

    expect(outcome).toMatchObject({ status: 'finished', finishReason: 'completed', flowId: 'trip', results: ANSWERS });
    expect(outcome.answer).toBe(`Plan completed:\n\n${SUMMARY}`);
    expect(outcome.plan.steps.map((step) => step.status)).toEqual(['completed', 'completed']);
    const local = await inProcess(flowId, outcome.state.planId);
    expect(outcome.state).toEqual(local.state);
    expect(server.requests.map(purposeOf)).toEqual(['plan', 'step 0', 'step 1', 'summary']);

    // Each step was a run of its own, a child of the flow, under `{flowId}/{effect id}`.
    expect(await durable.getFlow(flowId)).toMatchObject({ status: 'ended', workerId: 'flow-worker', outcome: {} });
    expect(await durable.getRun('trip/step-2')).toMatchObject({
      status: 'ended',
      workerId: 'flow-worker',
      outcome: { status: 'finished', answer: ANSWERS[0], runId: 'trip/step-2' },
    });
    expect(await durable.getRun('trip/step-3')).toMatchObject({ outcome: { answer: ANSWERS[1] } });
    // A flow's id names no run, and a run's no flow: neither is read as the other.
    expect(await durable.getRun(flowId)).toBeUndefined();
    expect(await durable.getFlow('trip/step-2')).toBeUndefined();

    // Observers read the flow's transitions and, in their place, each step's run.
    expect(await itemsOf(durable, flowId)).toEqual([
      'flow started',
      'flow llmResponded plan-1',
      'researcher@trip/step-2 started',
      'researcher@trip/step-2 llmResponded llm-1',
      'flow agentFinished step-2',
      'writer@trip/step-3 started',
      'writer@trip/step-3 llmResponded llm-1',
      'flow agentFinished step-3',
      'flow llmResponded summary-4',
    ]);
  });
});

describe('a worker killed during a flow step', () => {
  it('resumes the step run where it was: the plan and the first step are not asked again', async () => {
    // The second step's model call never answers the first time.
    const { script, held } = stallOnce(flowReply, (request) => purposeOf(request) === 'step 1');
    const server = await harness.server({ script });
    const log = await harness.toolLog('flow-crash');
    const first = harness.worker('flow-crash-worker', server.baseURL, log);
    await first.ready;
    const durable = await harness.client();
    const flowId = await durable.enqueueFlow({ flowId: 'crashed-trip', flow: 'day-trip', input: TASK });
    await held;
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');

    // The flow waits on the second step's run, itself waiting on the model.
    const running = await durable.getFlow(flowId);
    expect(running).toMatchObject({
      status: 'running',
      workerId: 'flow-crash-worker',
      progress: { status: 'running', current: { index: 1, executor: 'writer' }, runId: 'crashed-trip/step-3' },
    });
    expect(await durable.getRun('crashed-trip/step-3')).toMatchObject({
      status: 'running',
      progress: { status: 'awaiting_llm' },
    });

    await harness.worker('flow-crash-worker', server.baseURL, log).ready;
    const outcome = await durable.waitForFlow(flowId);

    expect(outcome).toMatchObject({ status: 'finished', results: ANSWERS, answer: `Plan completed:\n\n${SUMMARY}` });
    // Only the interrupted call was sent again.
    expect(server.requests.map(purposeOf)).toEqual(['plan', 'step 0', 'step 1', 'step 1', 'summary']);
    expect((await inProcess(flowId, outcome.state.planId)).state).toEqual(outcome.state);
    expect(await durable.getRun('crashed-trip/step-3')).toMatchObject({
      status: 'ended',
      outcome: { answer: ANSWERS[1] },
    });
  });

  it('a flow taken up again past its time limit ends as timed out at once: the limit counts from its first start', async () => {
    const { script, held } = stallOnce(flowReply, (request) => purposeOf(request) === 'step 1');
    const server = await harness.server({ script });
    const log = await harness.toolLog('flow-late');
    const first = harness.worker('flow-late-worker', server.baseURL, log);
    await first.ready;
    const durable = await harness.client();
    const enqueued = Date.now();
    // `quick-trip` is `day-trip` with a limit of 8 s.
    const flowId = await durable.enqueueFlow({ flowId: 'late-trip', flow: 'quick-trip', input: TASK });
    await held;
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    // Nobody runs the flow until its limit has passed (the time itself is what is tested).
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, enqueued + 8_500 - Date.now())));

    await harness.worker('flow-late-worker', server.baseURL, log).ready;
    const takenUp = Date.now();
    const outcome = await durable.waitForFlow(flowId);

    expect(outcome).toMatchObject({
      status: 'finished',
      finishReason: 'timeout',
      error: { code: 'FLOW_TIMEOUT', message: 'the flow ran out of time (8 s)' },
    });
    // A replay that started the limit over would have let the step finish and the flow complete
    // (its summary asked for), or, on a machine too slow for that, timed out no sooner than 8 s
    // after it was taken up: the bound is that restarted limit, not a guess at the machine's speed.
    expect(server.requests.map(purposeOf)).not.toContain('summary');
    expect(Date.now() - takenUp).toBeLessThan(8_000);
    // The step's run is cancelled with the timed-out flow, unless it finished first (both resume at
    // once): either way it has ended, and nothing is left for the next test.
    await until(async () => {
      const status = (await durable.getRun('late-trip/step-3'))?.status;
      return status === 'cancelled' || status === 'ended' ? status : undefined;
    }, "the step's run to end");
  });

  it('a flow whose worker dies for good is adopted with its step run by a live worker', async () => {
    const { script, held } = stallOnce(flowReply, (request) => purposeOf(request) === 'step 1');
    const server = await harness.server({ script });
    const log = await harness.toolLog('flow-failover');
    const doomed = harness.worker('flow-doomed', server.baseURL, log);
    await doomed.ready;
    const durable = await harness.client();
    const flowId = await durable.enqueueFlow({ flowId: 'adopted-trip', flow: 'day-trip', input: TASK });
    await held;
    const survivor = harness.worker('flow-survivor', server.baseURL, log);
    await survivor.ready;
    doomed.child.kill('SIGKILL');
    await doomed.exited;

    expect(await durable.waitForFlow(flowId)).toMatchObject({ status: 'finished', results: ANSWERS });
    expect(await durable.getFlow(flowId)).toMatchObject({ workerId: 'flow-survivor' });
    expect(await durable.getRun('adopted-trip/step-3')).toMatchObject({ workerId: 'flow-survivor' });
    expect(await durable.getRun('adopted-trip/step-2')).toMatchObject({ workerId: 'flow-doomed' });
    expect(server.requests.map(purposeOf)).toEqual(['plan', 'step 0', 'step 1', 'step 1', 'summary']);
  });
});

describe('flows a worker is given', () => {
  it('an unknown flow name ends the flow with an error naming it', async () => {
    const server = await harness.server({ script: flowReply });
    await harness.worker('flow-names', server.baseURL, await harness.toolLog('flow-names')).ready;
    const durable = await harness.client();
    const flowId = await durable.enqueueFlow({ flow: 'no-such-flow', input: TASK });
    await expect(durable.waitForFlow(flowId)).rejects.toThrow('this worker has no flow named "no-such-flow"');
    expect(await durable.getFlow(flowId)).toMatchObject({
      status: 'errored',
      error: { code: 'INTERNAL', message: expect.stringContaining('no-such-flow') },
    });
    expect(server.requests).toEqual([]);
  });

  it('a flow naming an agent the worker does not have stops the worker from starting', async () => {
    const llm = createOpenAiLlm({ model: 'scripted-model', apiKey: 'test', baseURL: 'http://127.0.0.1:9/v1' });
    const { researcher } = flowAgents();
    await expect(
      startWorker({
        databaseUrl: 'postgresql://postgres@127.0.0.1:9/never',
        workerId: 'misconfigured',
        applicationVersion: 'test-1',
        decisionKey: generateDecisionKey(),
        agents: { researcher: { agent: researcher, llm } },
        flows: { 'day-trip': { agents: ['researcher', 'writer'], llm } },
      }),
    ).rejects.toThrow('flow "day-trip" names agents this worker does not have: writer');
  });
});

// The `errands` flow: its recorder notes one thing a turn, its holder holds until stopped.
const NOTES_TASK = 'Note three temples';
const HOLD_TASK = 'Hold the line, then report';
const PICKED = 'Fushimi Inari, Kiyomizu-dera, Kinkaku-ji.';

const errandsReply = flowScript({
  plan: (task) =>
    task.endsWith(NOTES_TASK)
      ? { id: 'notes', title: 'Temple notes', steps: ['[RESEARCHER] Pick three temples', '[RECORDER] Note each one'] }
      : { id: 'hold', title: 'Holding', steps: ['[HOLDER] Hold until told', '[RESEARCHER] Report back'] },
  step: (request) => {
    const step = stepTextOf(request);
    if (step.startsWith('[RECORDER]')) return noteReply(request, 3);
    if (step.startsWith('[HOLDER]')) {
      // Tried again after its run was cancelled, the holder lets go at once.
      if (promptOf(request).includes('An earlier attempt at this step failed')) return { content: 'released' };
      return turnsDone(request) === 0 ? { toolCalls: [{ name: 'hold', arguments: {} }] } : { content: 'held' };
    }
    return { content: PICKED };
  },
  summary: 'Errands done.',
});

/** `errands` run in this process by `runFlow` on the same agents and script. */
async function errandsInProcess(flowId: string, task: string, planId: string): Promise<FlowOutcome> {
  const server = await harness.server({ script: errandsReply });
  const llm = createOpenAiLlm({ model: 'scripted-model', apiKey: 'test', baseURL: server.baseURL, maxRetries: 0 });
  const { recorder, holder } = testAgents({ toolLog: await harness.toolLog(`${flowId}-reference`), llm });
  const agents = { researcher: flowAgents().researcher, recorder: recorder.agent, holder: holder.agent };
  return runFlow(createPlanningFlow({ agents }), task, { llm, flowId, planId });
}

const logged = (log: string, line: string) => async () =>
  (await harness.lines(log)).includes(line) ? true : undefined;

describe('a flow step whose run continues as new', () => {
  it("finishes the step with the last part's outcome; the flow ends as runFlow does in process", async () => {
    const log = await harness.toolLog('flow-parts');
    const server = await harness.server({ script: errandsReply });
    await harness.worker('flow-parts-worker', server.baseURL, log, { continueEvery: 1 }).ready;
    const durable = await harness.client();

    const flowId = await durable.enqueueFlow({ flowId: 'notes', flow: 'errands', input: NOTES_TASK });
    const outcome = await durable.waitForFlow(flowId);

    expect(outcome).toMatchObject({
      status: 'finished',
      results: [PICKED, 'done'],
      answer: 'Plan completed:\n\nErrands done.',
    });
    expect(outcome.plan.steps.map((step) => step.status)).toEqual(['completed', 'completed']);
    // The recorder's run took four turns, one a part: the flow awaited the last part's outcome.
    expect(await harness.parts('notes/step-3')).toEqual([
      { id: 'notes/step-3', status: 'SUCCESS', steps: ['llm-1', 'running-1-0'] },
      { id: 'notes/step-3~continued-2', status: 'SUCCESS', steps: ['llm-2', 'running-2-0'] },
      { id: 'notes/step-3~continued-3', status: 'SUCCESS', steps: ['llm-3', 'running-3-0'] },
      { id: 'notes/step-3~continued-4', status: 'SUCCESS', steps: ['llm-4'] },
    ]);
    expect(await harness.executions(log)).toEqual([1, 2, 3].map((turn) => `notes/step-3 running-${turn}-0`));
    expect(server.requests.map(purposeOf)).toEqual(['plan', 'step 0', ...Array(4).fill('step 1'), 'summary']);
    expect(outcome.state).toEqual((await errandsInProcess(flowId, NOTES_TASK, outcome.state.planId)).state);

    // The step's run is one run to its readers, and the flow's stream carries it whole.
    expect(await durable.getRun('notes/step-3')).toMatchObject({
      status: 'ended',
      outcome: { status: 'finished', answer: 'done', runId: 'notes/step-3', usage: { llmCalls: 4 } },
    });
    expect(await itemsOf(durable, flowId)).toEqual([
      'flow started',
      'flow llmResponded plan-1',
      'researcher@notes/step-2 started',
      'researcher@notes/step-2 llmResponded llm-1',
      'flow agentFinished step-2',
      'recorder@notes/step-3 started',
      ...[1, 2, 3].flatMap((turn) => [
        `recorder@notes/step-3 llmResponded llm-${turn}`,
        `recorder@notes/step-3 toolCompleted running-${turn}-0`,
      ]),
      'recorder@notes/step-3 llmResponded llm-4',
      'flow agentFinished step-3',
      'flow llmResponded summary-4',
    ]);
  });
});

describe('cancelling a flow from another process', () => {
  it("cancelFlow stops the flow and its step's run mid-step; nothing after runs, neither resumes", async () => {
    const log = await harness.toolLog('flow-cancel');
    // A plain run, to see the restarted worker take work: the model answers it at once.
    const server = await harness.server({
      script: (request: RecordedRequest) =>
        taskOf(request) === 'say done' ? { content: 'done' } : errandsReply(request),
    });
    const worker = harness.worker('flow-cancel-worker', server.baseURL, log);
    await worker.ready;
    const durable = await harness.client();
    const flowId = await durable.enqueueFlow({ flowId: 'held', flow: 'errands', input: HOLD_TASK });
    await until(logged(log, 'held/step-2 running-1-0 holding flow-cancel-worker'), "the step's tool to start");
    expect(await durable.getFlow(flowId)).toMatchObject({ status: 'running', progress: { runId: 'held/step-2' } });

    expect(await durable.cancelFlow(flowId)).toEqual({
      runId: flowId,
      status: 'cancelled',
      error: { code: 'RUN_CANCELLED', message: 'the flow was cancelled' },
    });
    // The worker hears of it and stops the step's tool.
    await until(logged(log, 'held/step-2 running-1-0 stopped flow-cancel-worker'), 'the tool to be stopped');
    expect(await durable.getRun('held/step-2')).toMatchObject({ status: 'cancelled' });
    await expect(durable.waitForFlow(flowId)).rejects.toThrow(RunCancelledError);
    await expect(durable.waitForFlow(flowId)).rejects.toThrow('flow "held" was cancelled');

    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe('exit 0');
    await harness.worker('flow-cancel-worker', server.baseURL, log).ready;
    const after = await durable.enqueueRun({ runId: 'after-held', agent: 'researcher', input: 'say done' });
    expect(await durable.waitForRun(after)).toMatchObject({ status: 'finished', answer: 'done' });

    // Neither the flow nor its step went on: no retry, no second step, no summary.
    expect(server.requests.map((request) => (taskOf(request) === 'say done' ? 'run' : purposeOf(request)))).toEqual([
      'plan',
      'step 0',
      'run',
    ]);
    expect(await harness.lines(log)).toEqual([
      'held/step-2 running-1-0 holding flow-cancel-worker',
      'held/step-2 running-1-0 stopped flow-cancel-worker',
    ]);
    expect(await durable.getFlow(flowId)).toMatchObject({ status: 'cancelled' });
    expect(await durable.getRun('held/step-2')).toMatchObject({ status: 'cancelled' });
  });

  it("a flow out of time stops its step's run: the tool in flight is stopped, the run cancelled", async () => {
    const log = await harness.toolLog('flow-timeout');
    const server = await harness.server({ script: errandsReply });
    await harness.worker('flow-timeout-worker', server.baseURL, log).ready;
    const durable = await harness.client();
    // `quick-errands` is `errands` with a limit of 10 s (the plan and the step's start must come
    // first, even on a loaded machine); its first step holds until stopped.
    const flowId = await durable.enqueueFlow({ flowId: 'overdue', flow: 'quick-errands', input: HOLD_TASK });
    await until(logged(log, 'overdue/step-2 running-1-0 holding flow-timeout-worker'), "the step's tool to start");
    expect(await durable.waitForFlow(flowId)).toMatchObject({
      finishReason: 'timeout',
      error: { code: 'FLOW_TIMEOUT', message: 'the flow ran out of time (10 s)' },
    });
    await until(logged(log, 'overdue/step-2 running-1-0 stopped flow-timeout-worker'), 'the tool to be stopped');
    expect(await durable.getRun('overdue/step-2')).toMatchObject({ status: 'cancelled' });
    expect(server.requests.map(purposeOf)).toEqual(['plan', 'step 0']);
  });

  it("cancelling a step's run alone fails that attempt: the flow tries the step again and goes on", async () => {
    const log = await harness.toolLog('flow-cancel-step');
    const server = await harness.server({ script: errandsReply });
    await harness.worker('flow-step-worker', server.baseURL, log).ready;
    const durable = await harness.client();
    const flowId = await durable.enqueueFlow({ flowId: 'released', flow: 'errands', input: HOLD_TASK });
    await until(logged(log, 'released/step-2 running-1-0 holding flow-step-worker'), "the step's tool to start");

    expect(await durable.cancel('released/step-2')).toMatchObject({ status: 'cancelled' });
    const outcome = await durable.waitForFlow(flowId);

    expect(outcome).toMatchObject({ status: 'finished', results: ['released', PICKED] });
    expect(outcome.plan.steps.map((step) => step.status)).toEqual(['completed', 'completed']);
    expect(server.requests.map(purposeOf)).toEqual(['plan', 'step 0', 'step 0', 'step 1', 'summary']);
    // The second attempt is a run of its own, told why the first failed.
    expect(promptOf(server.requests[2] as RecordedRequest)).toContain(
      'An earlier attempt at this step failed: the holder run failed: run "released/step-2" was cancelled.',
    );
    expect(await durable.getRun('released/step-2')).toMatchObject({ status: 'cancelled' });
    expect(await durable.getRun('released/step-3')).toMatchObject({ status: 'ended', outcome: { answer: 'released' } });
    expect(await harness.lines(log)).toEqual([
      'released/step-2 running-1-0 holding flow-step-worker',
      'released/step-2 running-1-0 stopped flow-step-worker',
    ]);
  });
});
