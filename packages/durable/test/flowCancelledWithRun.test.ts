import { createAgent, createOpenAiLlm } from '@openmanus/core';
import { startOpenAiServer } from '@openmanus/core/testing';
import { createPlanningFlow } from '@openmanus/flow';
import { describe, expect, it } from 'vitest';
import { FlowCancelledError } from '../src/cancelled.js';
import { type DurableFlowRuntime, durableFlow } from '../src/durableFlow.js';
import { flowScript, purposeOf } from './flowScript.js';

/** A durable runtime with nothing of an engine but the flow's step runs, as `startRun` gives them. */
const engineWith = (startRun: DurableFlowRuntime['startRun']): DurableFlowRuntime => ({
  runId: 'trip',
  runStep: async (_key, work) => work(),
  waitForSignal: async () => null,
  publish: async () => {},
  stream: async () => {},
  startRun,
});

// `cancelFlow` cancels the flow, then its step's run: the flow may hear of the run's cancellation
// before the engine tells the flow. This runs the flow on an engine whose step run reports just
// that (the order in which it happens on DBOS now and then), with nothing else of the engine.
const engineWhereTheRunHearsFirst = () =>
  engineWith(async () => ({
    outcome: async () => {
      throw new FlowCancelledError('flow "trip" was cancelled');
    },
    cancel: async () => {},
  }));

/**
 * An engine whose step runs never end; `started` resolves when the first is started, `cancelled`
 * lists the runs it was told to cancel.
 */
function engineWithEndlessRuns() {
  const cancelled: string[] = [];
  let startedOne: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    startedOne = resolve;
  });
  const engine = engineWith(async (runId) => {
    startedOne();
    return {
      outcome: () => new Promise<never>(() => {}),
      cancel: async () => {
        cancelled.push(runId);
      },
    };
  });
  return { engine, started, cancelled };
}

const tripScript = () =>
  flowScript({
    plan: () => ({ id: 'trip', title: 'Trip', steps: ['Find temples', 'Write the day'] }),
    step: () => ({ content: 'never asked' }),
    summary: 'never asked either',
  });

describe('a flow cancelled together with its step’s run', () => {
  it('stops as cancelled when the run tells it first: no retry, no next step, no summary', async () => {
    const server = await startOpenAiServer({ script: tripScript() });
    try {
      const llm = createOpenAiLlm({ model: 'planner', apiKey: 'test', baseURL: server.baseURL, maxRetries: 0 });
      const flow = createPlanningFlow({ agents: { researcher: createAgent({ name: 'Researcher' }) } });
      const outcome = await durableFlow(engineWhereTheRunHearsFirst(), flow, 'Plan a day in Kyoto', { llm });
      expect(outcome).toMatchObject({ status: 'finished', finishReason: 'cancelled' });
      expect(outcome.plan.steps.map((s) => s.status)).toEqual(['in_progress', 'not_started']);
      expect(server.requests.map(purposeOf)).toEqual(['plan']);
    } finally {
      await server.close();
    }
  });
});

describe('a flow that ends with its step’s run in flight', () => {
  const flowOf = (timeoutMs: number) =>
    createPlanningFlow({ agents: { researcher: createAgent({ name: 'Researcher' }) }, timeoutMs });

  it('out of time: the run is cancelled, before the flow returns', async () => {
    const server = await startOpenAiServer({ script: tripScript() });
    try {
      const llm = createOpenAiLlm({ model: 'planner', apiKey: 'test', baseURL: server.baseURL, maxRetries: 0 });
      const { engine, cancelled } = engineWithEndlessRuns();
      const outcome = await durableFlow(engine, flowOf(300), 'Plan a day in Kyoto', { llm });
      expect(outcome).toMatchObject({ status: 'finished', finishReason: 'timeout' });
      expect(cancelled).toEqual(['trip/step-2']);
    } finally {
      await server.close();
    }
  });

  it('stopped by its worker (or cancelled): the run is left alone, to resume with it', async () => {
    const server = await startOpenAiServer({ script: tripScript() });
    try {
      const llm = createOpenAiLlm({ model: 'planner', apiKey: 'test', baseURL: server.baseURL, maxRetries: 0 });
      const { engine, started, cancelled } = engineWithEndlessRuns();
      const stopping = new AbortController();
      const flow = durableFlow(engine, flowOf(60_000), 'Plan a day in Kyoto', { llm, signal: stopping.signal });
      await started;
      stopping.abort(new Error('the worker is stopping'));
      expect(await flow).toMatchObject({ finishReason: 'cancelled' });
      expect(cancelled).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
