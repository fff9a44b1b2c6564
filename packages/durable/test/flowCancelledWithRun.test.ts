import { createAgent, createOpenAiLlm } from '@openmanus/core';
import { startOpenAiServer } from '@openmanus/core/testing';
import { createPlanningFlow } from '@openmanus/flow';
import { describe, expect, it } from 'vitest';
import { FlowCancelledError } from '../src/cancelled.js';
import { type DurableFlowRuntime, durableFlow } from '../src/durableFlow.js';
import { flowScript, purposeOf } from './flowScript.js';

// `cancelFlow` cancels the flow, then its step's run: the flow may hear of the run's cancellation
// before the engine tells the flow. This runs the flow on an engine whose step run reports just
// that (the order in which it happens on DBOS now and then), with nothing else of the engine.
const engineWhereTheRunHearsFirst = (): DurableFlowRuntime => ({
  runId: 'cancelled-trip',
  runStep: async (_key, work) => work(),
  waitForSignal: async () => null,
  publish: async () => {},
  stream: async () => {},
  startRun: async () => ({
    outcome: async () => {
      throw new FlowCancelledError('flow "cancelled-trip" was cancelled');
    },
  }),
});

describe('a flow cancelled together with its step’s run', () => {
  it('stops as cancelled when the run tells it first: no retry, no next step, no summary', async () => {
    const server = await startOpenAiServer({
      script: flowScript({
        plan: () => ({ id: 'trip', title: 'Trip', steps: ['Find temples', 'Write the day'] }),
        step: () => ({ content: 'never asked' }),
        summary: 'never asked either',
      }),
    });
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
