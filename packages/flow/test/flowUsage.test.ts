import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { costOf, createAgent, createFileStore, createOpenAiLlm, defaultPolicies, terminate } from '@openmanus/core';
import { type OpenAiServer, startOpenAiServer } from '@openmanus/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { restoreFlow } from '../src/flowSchema.js';
import type { FlowState } from '../src/flowState.js';
import { createPlanningFlow } from '../src/planningFlow.js';
import { resumeFlow, runFlow } from '../src/runFlow.js';

let server: OpenAiServer | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

type Script = Parameters<typeof startOpenAiServer>[0]['script'];
async function model(script: Script, name = 'gpt-4o') {
  server = await startOpenAiServer({ script });
  return createOpenAiLlm({ model: name, apiKey: 'k', baseURL: server.baseURL, maxRetries: 0 });
}

const flow = () =>
  createPlanningFlow({
    agents: {
      writer: createAgent({
        name: 'Writer',
        systemPrompt: 'You write.',
        tools: [terminate],
        policies: defaultPolicies({ maxSteps: 3 }),
      }),
    },
  });
const plan = (steps: readonly string[]) => ({
  toolCalls: [{ name: 'planning', arguments: { command: 'create', plan_id: 'p', title: 'Notes', steps } }],
  usage: { inputTokens: 1_000, outputTokens: 100, cachedInputTokens: 0 },
});
const done = (text: string) => ({
  content: text,
  toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }],
  usage: { inputTokens: 2_000, outputTokens: 50, cachedInputTokens: 1_600 },
});
const summary = { content: 'All done.', usage: { inputTokens: 500, outputTokens: 20, cachedInputTokens: 400 } };

// At gpt-4o's $2.50 in, $1.25 cached, $10 out per million:
const PLAN_COST = (1_000 * 2.5 + 100 * 10) / 1e6;
const STEP_COST = (400 * 2.5 + 1_600 * 1.25 + 50 * 10) / 1e6;
const SUMMARY_COST = (100 * 2.5 + 400 * 1.25 + 20 * 10) / 1e6;

describe("a flow's usage", () => {
  it("sums the cached tokens and cost of its own calls and its executors'", async () => {
    const llm = await model([plan(['[WRITER] One']), done('Wrote it.'), summary]);
    const outcome = await runFlow(flow(), 'Write notes', { llm });
    expect(outcome.finishReason).toBe('completed');
    expect(outcome.usage.llmCalls).toBe(3);
    expect(outcome.usage.cachedInputTokens).toBe(2_000);
    expect(outcome.usage.costUsd).toBeCloseTo(PLAN_COST + STEP_COST + SUMMARY_COST, 12);
  });

  it('keeps them through a saved flow and its resume', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flow-usage-'));
    dirs.push(dir);
    const store = createFileStore<FlowState>(join(dir, 'flows'));
    const llm = await model([plan(['[WRITER] One', '[WRITER] Two']), done('One.')]);
    const first = await runFlow(flow(), 'Write notes', {
      llm,
      store,
      flowId: 'notes',
      // The process "dies" as soon as step 1 has been handed to its executor.
      checkpoint: (state) => {
        if (state.current?.index === 1) throw new Error('killed');
      },
    });
    expect(first.status).toBe('failed');
    const saved = (await store.load('notes'))?.state;
    const restored = await restoreFlow(JSON.parse(JSON.stringify(saved)));
    expect(restored.usage).toEqual(saved?.usage);
    expect(restored.usage.cachedInputTokens).toBe(1_600);

    await server?.close();
    const later = await model([done('Two.'), summary]);
    const outcome = await resumeFlow(flow(), 'notes', { llm: later, store });
    expect(outcome.finishReason).toBe('completed');
    expect(outcome.usage.cachedInputTokens).toBe(1_600 * 2 + 400);
    expect(outcome.usage.costUsd).toBeCloseTo(PLAN_COST + 2 * STEP_COST + SUMMARY_COST, 12);
  });

  it('has an unknown cost once a call had no price', async () => {
    const llm = await model([plan(['[WRITER] One']), done('Wrote it.'), summary], 'unpriced-model');
    const outcome = await runFlow(flow(), 'Write notes', { llm });
    expect(outcome.usage.cachedInputTokens).toBe(2_000);
    expect(costOf(outcome.usage)).toBeNull();
  });
});
