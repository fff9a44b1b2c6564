import type { RecordedRequest } from '@openmanus/core/testing';
import { describe, expect, it } from 'vitest';
import { durableHarness, until } from './harness.js';
import { noteReply, taskOf, turnsDone } from './scriptedNotes.js';
import { stallOnce } from './stallOnce.js';

const harness = durableHarness();

describe('a worker killed in the middle of a run', () => {
  it('resumes on restart: completed steps replay from Postgres, only the interrupted LLM call is sent again', async () => {
    const log = await harness.toolLog('crash');
    // The third model call (after two recorded tool calls) never answers the first time.
    const { script, held } = stallOnce(
      (request) => noteReply(request, 3),
      (request) => turnsDone(request) === 2,
    );
    const server = await harness.server({ script });

    const first = harness.worker('crash-worker', server.baseURL, log);
    await first.ready;
    const durable = await harness.client();
    const runId = await durable.enqueueRun({ runId: 'crash-run', agent: 'recorder', input: 'record three notes' });
    await held;
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');

    expect(await harness.executions(log)).toHaveLength(2);
    expect(await durable.getRun(runId)).toMatchObject({
      status: 'running',
      workerId: 'crash-worker',
      progress: { status: 'awaiting_llm', step: 3, pending: [] },
    });

    const restarted = harness.worker('crash-worker', server.baseURL, log);
    await restarted.ready;
    const outcome = await durable.waitForRun(runId);

    expect(outcome).toMatchObject({ status: 'finished', answer: 'done', runId });
    expect(outcome.usage.llmCalls).toBe(4);
    expect(await harness.executions(log)).toEqual([
      'crash-run running-1-0',
      'crash-run running-2-0',
      'crash-run running-3-0',
    ]);
    // Model calls by the turns done when sent: the interrupted third call twice, every other once.
    expect(server.requests.map(turnsDone)).toEqual([0, 1, 2, 2, 3]);
    expect(await durable.getRun(runId)).toMatchObject({ status: 'ended', workerId: 'crash-worker' });
    // Observers read every transition once, in order, across the crash.
    const events: string[] = [];
    for await (const { event } of durable.streamEvents(runId))
      events.push('effectId' in event ? `${event.type} ${event.effectId}` : event.type);
    expect(events).toEqual([
      'started',
      'llmResponded llm-1',
      'toolCompleted running-1-0',
      'llmResponded llm-2',
      'toolCompleted running-2-0',
      'llmResponded llm-3',
      'toolCompleted running-3-0',
      'llmResponded llm-4',
    ]);
  });
});

describe('parallel tool calls', () => {
  it('a replay after a crash reads every call of the turn back: none runs again, results in call order', async () => {
    const log = await harness.toolLog('parallel');
    const notes = ['a', 'b', 'c'].map((note) => ({ name: 'record', arguments: { note } }));
    const { script, held } = stallOnce(
      (request) => (turnsDone(request) === 0 ? { toolCalls: notes } : { content: 'done' }),
      (request) => turnsDone(request) !== 0,
    );
    const server = await harness.server({ script });
    const first = harness.worker('parallel-worker', server.baseURL, log);
    await first.ready;
    const durable = await harness.client();
    const runId = await durable.enqueueRun({ runId: 'parallel-run', agent: 'recorder', input: 'record three at once' });
    await held;
    first.child.kill('SIGKILL');
    await first.exited;

    await harness.worker('parallel-worker', server.baseURL, log).ready;
    expect(await durable.waitForRun(runId)).toMatchObject({ status: 'finished', answer: 'done' });
    expect((await harness.executions(log)).sort()).toEqual([
      'parallel-run running-1-0',
      'parallel-run running-1-1',
      'parallel-run running-1-2',
    ]);
    expect(server.requests.map(turnsDone)).toEqual([0, 3, 3]);
    // The tool results reach the model in the calls' order, whatever order they finished in.
    const results = server.requests[2]?.messages.filter((message) => message.role === 'tool').map((m) => m.content);
    expect(results).toEqual(['recorded a', 'recorded b', 'recorded c']);
  });
});

describe('a worker killed while an at-most-once tool runs', () => {
  it('the resumed run does not run the tool again and tells the model the call was interrupted', async () => {
    const log = await harness.toolLog('once');
    const server = await harness.server({
      script: (request: RecordedRequest) =>
        turnsDone(request) === 0
          ? { toolCalls: [{ name: 'launch', arguments: { what: 'the rocket' } }] }
          : { content: 'done' },
    });
    const first = harness.worker('launch-worker', server.baseURL, log);
    await first.ready;
    const durable = await harness.client();
    const runId = await durable.enqueueRun({ runId: 'once-run', agent: 'launcher', input: 'launch the rocket' });
    await until(async () => ((await harness.executions(log)).length > 0 ? true : undefined), 'the launch to start');
    first.child.kill('SIGKILL');
    await first.exited;

    await harness.worker('launch-worker', server.baseURL, log).ready;
    expect(await durable.waitForRun(runId)).toMatchObject({ status: 'finished', answer: 'done' });
    expect(await harness.executions(log)).toEqual(['once-run running-1-0']);
    const observed = server.requests[1]?.messages.find((message) => message.role === 'tool');
    expect(String(observed?.content)).toContain('launch was interrupted while it ran');
  });
});

describe('a worker that dies for good', () => {
  it('its run is adopted by a live worker, which re-runs only the interrupted step', async () => {
    const log = await harness.toolLog('failover');
    const { script, held } = stallOnce(
      (request) => noteReply(request, 2),
      (request) => turnsDone(request) === 1,
    );
    const server = await harness.server({ script });
    const doomed = harness.worker('doomed', server.baseURL, log);
    await doomed.ready;
    const durable = await harness.client();
    const runId = await durable.enqueueRun({ runId: 'adopted-run', agent: 'recorder', input: 'record two notes' });
    await held;
    const survivor = harness.worker('survivor', server.baseURL, log);
    await survivor.ready;
    doomed.child.kill('SIGKILL');
    await doomed.exited;

    expect(await durable.waitForRun(runId)).toMatchObject({ status: 'finished', answer: 'done' });
    expect(await durable.getRun(runId)).toMatchObject({ status: 'ended', workerId: 'survivor' });
    expect(await harness.executions(log)).toEqual(['adopted-run running-1-0', 'adopted-run running-2-0']);
    expect(server.requests.map(turnsDone)).toEqual([0, 1, 1, 2]);
  });

  it('a second live worker cannot take the id of one that is alive', async () => {
    const log = await harness.toolLog('twins');
    const server = await harness.server({ script: [] });
    await harness.worker('only-one', server.baseURL, log).ready;
    const twin = harness.worker('only-one', server.baseURL, log);
    await expect(twin.ready).rejects.toThrow('worker id "only-one" is in use by a live worker');
  });
});

describe('two workers on one queue', () => {
  it('share the runs, and no step of any run is executed twice', async () => {
    const log = await harness.toolLog('shared');
    // Slow enough replies that one worker alone cannot drain the queue before the other polls.
    const server = await harness.server({
      script: (request: RecordedRequest) => ({ ...noteReply(request, 2), delayMs: 150 }),
    });
    const one = harness.worker('worker-a', server.baseURL, log, { concurrency: 3 });
    const two = harness.worker('worker-b', server.baseURL, log, { concurrency: 3 });
    await Promise.all([one.ready, two.ready]);
    const durable = await harness.client();

    const runIds = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        durable.enqueueRun({ runId: `shared-${i}`, agent: 'recorder', input: `task shared-${i}` }),
      ),
    );
    const outcomes = await Promise.all(runIds.map((runId) => durable.waitForRun(runId)));

    expect(outcomes.map((outcome) => outcome.status)).toEqual(runIds.map(() => 'finished'));
    const executions = await harness.executions(log);
    expect(executions).toHaveLength(40);
    expect(new Set(executions).size).toBe(40);
    // Every run's model calls were sent once each: 2 tool turns and the answer.
    for (const runId of runIds) {
      const calls = server.requests.filter((request) => taskOf(request) === `task ${runId}`);
      expect(calls.map(turnsDone)).toEqual([0, 1, 2]);
    }
    const ranOn = await Promise.all(
      runIds.map(async (runId) => (await durable.getRun(runId)) as { workerId?: string }),
    );
    expect(new Set(ranOn.map((info) => info.workerId))).toEqual(new Set(['worker-a', 'worker-b']));
  });
});
