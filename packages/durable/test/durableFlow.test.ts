import { createOpenAiLlm } from '@openmanus/core';
import type { RecordedRequest, ScriptedReply } from '@openmanus/core/testing';
import { createPlanningFlow, type FlowOutcome, runFlow } from '@openmanus/flow';
import { describe, expect, it } from 'vitest';
import { type DurableClient, type FlowEventItem, startWorker } from '../src/index.js';
import { flowAgents } from './flowAgents.mjs';
import { durableHarness } from './harness.js';

const harness = durableHarness();

const TASK = 'Plan a day of temples in Kyoto';
const STEPS = ['[RESEARCHER] Pick three temples', '[WRITER] Write the itinerary'];
const ANSWERS = ['Fushimi Inari, Kiyomizu-dera, Kinkaku-ji.', 'Dawn at Fushimi Inari, sunset at Kinkaku-ji.'];
const SUMMARY = 'A one-day route through three temples.';

/** What a request to the model is for: the plan, an executor's step (by index), or the summary. */
type Purpose = 'plan' | 'step 0' | 'step 1' | 'summary';

function purposeOf(request: RecordedRequest): Purpose {
  const user = String(request.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
  if (request.tool_choice === 'required') return 'plan';
  const step = user.match(/Your task now is step (\d)/)?.[1];
  if (step === '0' || step === '1') return `step ${step}`;
  if (user.startsWith('The plan is done')) return 'summary';
  throw new Error(`the script has no reply for: ${user.slice(0, 80)}`);
}

/** The model's decisions for the flow: a two-step plan, an answer per step, the summary. */
function flowReply(request: RecordedRequest): ScriptedReply {
  const purpose = purposeOf(request);
  if (purpose === 'plan') {
    const create = { command: 'create', plan_id: 'temples', title: 'A day in Kyoto', steps: STEPS };
    return { toolCalls: [{ id: 'call_plan', name: 'planning', arguments: create }] };
  }
  if (purpose === 'summary') return { content: SUMMARY };
  return { content: ANSWERS[Number(purpose.slice(-1))] ?? '' };
}

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
    let holding = true;
    let hold: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      hold = resolve;
    });
    const server = await harness.server({
      script: (request: RecordedRequest) => {
        const reply = flowReply(request);
        // The second step's model call never answers the first time.
        if (purposeOf(request) === 'step 1' && holding) {
          holding = false;
          hold();
          return { ...reply, stallAfter: 0 };
        }
        return reply;
      },
    });
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

  it('a flow whose worker dies for good is adopted with its step run by a live worker', async () => {
    let holding = true;
    let hold: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      hold = resolve;
    });
    const server = await harness.server({
      script: (request: RecordedRequest) => {
        const reply = flowReply(request);
        if (purposeOf(request) === 'step 1' && holding) {
          holding = false;
          hold();
          return { ...reply, stallAfter: 0 };
        }
        return reply;
      },
    });
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
      error: expect.stringContaining('no-such-flow'),
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
        agents: { researcher: { agent: researcher, llm } },
        flows: { 'day-trip': { agents: ['researcher', 'writer'], llm } },
      }),
    ).rejects.toThrow('flow "day-trip" names agents this worker does not have: writer');
  });
});
