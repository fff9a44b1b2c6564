import { createOpenAiLlm, run } from '@openmanus/core';
import type { RecordedRequest } from '@openmanus/core/testing';
import { describe, expect, it } from 'vitest';
import { testAgents } from './agents.mjs';
import { durableHarness } from './harness.js';
import { noteReply, taskOf, turnsDone } from './scriptedNotes.js';

const harness = durableHarness();

/** Six notes, one a turn, then the answer: seven model turns. */
const sixNotes = (request: RecordedRequest) => noteReply(request, 6);

describe('a long run continues as a fresh workflow every K model turns', () => {
  it('runs as a chain of parts of K turns each, and ends as the same run would in process', async () => {
    const log = await harness.toolLog('chain');
    const server = await harness.server({ script: sixNotes });
    await harness.worker('chain-worker', server.baseURL, log, { continueEvery: 2 }).ready;
    const durable = await harness.client();
    const runId = await durable.enqueueRun({ runId: 'chain-run', agent: 'recorder', input: 'record six notes' });

    const outcome = await durable.waitForRun(runId);

    // Each part recorded at most two turns: a replay never goes further back than that.
    expect(await harness.parts(runId)).toEqual([
      { id: 'chain-run', status: 'SUCCESS', steps: ['llm-1', 'running-1-0', 'llm-2', 'running-2-0'] },
      { id: 'chain-run~continued-2', status: 'SUCCESS', steps: ['llm-3', 'running-3-0', 'llm-4', 'running-4-0'] },
      { id: 'chain-run~continued-3', status: 'SUCCESS', steps: ['llm-5', 'running-5-0', 'llm-6', 'running-6-0'] },
      { id: 'chain-run~continued-4', status: 'SUCCESS', steps: ['llm-7'] },
    ]);
    expect(server.requests.map(turnsDone)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(await harness.executions(log)).toEqual([1, 2, 3, 4, 5, 6].map((turn) => `chain-run running-${turn}-0`));

    // The same agent, model script and task in process: the same final state, to the message.
    const reference = await harness.server({ script: sixNotes });
    const llm = createOpenAiLlm({ model: 'scripted-model', apiKey: 'test', baseURL: reference.baseURL, maxRetries: 0 });
    const { recorder } = testAgents({ toolLog: await harness.toolLog('chain-reference'), llm });
    const inProcess = await run(recorder.agent, 'record six notes', { llm, runId });
    expect(outcome).toEqual(inProcess);
    expect(outcome).toMatchObject({ status: 'finished', answer: 'done', usage: { llmCalls: 7 } });

    // One run for its observers: its id gives its status, and every transition once, in order.
    expect(await durable.getRun(runId)).toMatchObject({ status: 'ended', outcome: { answer: 'done' } });
    const events: string[] = [];
    for await (const { event } of durable.streamEvents(runId))
      events.push('effectId' in event ? `${event.type} ${event.effectId}` : event.type);
    expect(events).toEqual([
      'started',
      ...[1, 2, 3, 4, 5, 6].flatMap((turn) => [`llmResponded llm-${turn}`, `toolCompleted running-${turn}-0`]),
      'llmResponded llm-7',
    ]);
  });

  it('a worker killed at the handover: the next part starts once, nothing recorded runs again', async () => {
    const log = await harness.toolLog('handover');
    const server = await harness.server({ script: (request: RecordedRequest) => noteReply(request, 3) });
    // One run at a time: the halted part keeps the next one from starting on this worker.
    const doomed = harness.worker('handover-worker', server.baseURL, log, {
      continueEvery: 2,
      concurrency: 1,
      haltAtHandover: true,
    });
    await doomed.ready;
    const durable = await harness.client();
    const runId = await durable.enqueueRun({ runId: 'handover-run', agent: 'recorder', input: 'record three notes' });
    await doomed.said('handover');
    doomed.child.kill('SIGKILL');
    await doomed.exited;

    // Killed between the two: the next part is enqueued, the first has not ended.
    expect((await harness.parts(runId)).map(({ id, status }) => `${id} ${status}`)).toEqual([
      'handover-run PENDING',
      'handover-run~continued-2 ENQUEUED',
    ]);
    expect(await durable.getRun(runId)).toMatchObject({ status: 'running', progress: { step: 3 } });

    await harness.worker('handover-worker', server.baseURL, log, { continueEvery: 2 }).ready;
    expect(await durable.waitForRun(runId)).toMatchObject({
      status: 'finished',
      answer: 'done',
      usage: { llmCalls: 4 },
    });
    expect(await harness.parts(runId)).toEqual([
      { id: 'handover-run', status: 'SUCCESS', steps: ['llm-1', 'running-1-0', 'llm-2', 'running-2-0'] },
      { id: 'handover-run~continued-2', status: 'SUCCESS', steps: ['llm-3', 'running-3-0', 'llm-4'] },
    ]);
    expect(server.requests.map(turnsDone)).toEqual([0, 1, 2, 3]);
    expect(await harness.executions(log)).toEqual([1, 2, 3].map((turn) => `handover-run running-${turn}-0`));
  });

  it("a run's next part goes ahead of runs queued after it", async () => {
    const log = await harness.toolLog('ahead');
    const server = await harness.server({ script: (request: RecordedRequest) => noteReply(request, 2) });
    // One run at a time: the queue's order is the order the model sees.
    await harness.worker('ahead-worker', server.baseURL, log, { continueEvery: 1, concurrency: 1 }).ready;
    const durable = await harness.client();
    // The long run is taken first; the others are queued while its first part runs.
    for (const name of ['long', 'next-1', 'next-2'])
      await durable.enqueueRun({ runId: `ahead-${name}`, agent: 'recorder', input: `task ahead-${name}` });

    for (const name of ['long', 'next-1', 'next-2']) await durable.waitForRun(`ahead-${name}`);
    expect((await harness.parts('ahead-long')).map((part) => part.id)).toEqual([
      'ahead-long',
      'ahead-long~continued-2',
      'ahead-long~continued-3',
    ]);
    expect(server.requests.map((request) => `${taskOf(request)} ${turnsDone(request)}`)).toEqual([
      'task ahead-long 0',
      'task ahead-long 1',
      'task ahead-long 2',
      ...['next-1', 'next-2'].flatMap((name) => [0, 1, 2].map((turn) => `task ahead-${name} ${turn}`)),
    ]);
  });
});
