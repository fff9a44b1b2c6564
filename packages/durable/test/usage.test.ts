import { createOpenAiLlm, run } from '@openmanus/core';
import type { RecordedRequest, ScriptedReply } from '@openmanus/core/testing';
import { describe, expect, it } from 'vitest';
import { testAgents } from './agents.mjs';
import { durableHarness } from './harness.js';
import { noteReply, turnsDone } from './scriptedNotes.js';

const harness = durableHarness();

/** Three notes, then the answer; every turn after the first served mostly from the prompt cache. */
const cachedNotes = (request: RecordedRequest): ScriptedReply => ({
  ...noteReply(request, 3),
  usage: { inputTokens: 1_000, outputTokens: 40, cachedInputTokens: turnsDone(request) === 0 ? 0 : 800 },
});

describe("a durable run's usage", () => {
  it('keeps cached tokens and cost through recorded steps and parts, as the same run in process', async () => {
    const log = await harness.toolLog('usage');
    const server = await harness.server({ script: cachedNotes });
    await harness.worker('usage-worker', server.baseURL, log, { continueEvery: 2, model: 'gpt-4o-mini' }).ready;
    const durable = await harness.client();
    const runId = await durable.enqueueRun({ runId: 'usage-run', agent: 'recorder', input: 'record three notes' });
    const outcome = await durable.waitForRun(runId);

    // At gpt-4o-mini's $0.15 in, $0.075 cached, $0.60 out per million: one turn uncached, three mostly cached.
    const uncached = (1_000 * 0.15 + 40 * 0.6) / 1e6;
    const cached = (200 * 0.15 + 800 * 0.075 + 40 * 0.6) / 1e6;
    expect(outcome.usage.llmCalls).toBe(4);
    expect(outcome.usage.cachedInputTokens).toBe(2_400);
    expect(outcome.usage.costUsd).toBeCloseTo(uncached + 3 * cached, 12);

    const reference = await harness.server({ script: cachedNotes });
    const llm = createOpenAiLlm({ model: 'gpt-4o-mini', apiKey: 'test', baseURL: reference.baseURL, maxRetries: 0 });
    const { recorder } = testAgents({ toolLog: await harness.toolLog('usage-reference'), llm });
    const inProcess = await run(recorder.agent, 'record three notes', { llm, runId });
    expect(outcome.usage).toEqual(inProcess.usage);

    // Observers see it too: each transition's usage so far, the last one the run's.
    let last: unknown;
    for await (const item of durable.streamEvents(runId)) last = item.usage;
    expect(last).toEqual(outcome.usage);
  });
});
