import type { RecordedRequest } from '@openmanus/core/testing';
import { describe, expect, it } from 'vitest';
import { RunCancelledError } from '../src/client.js';
import { durableHarness, until } from './harness.js';
import { noteReply, taskOf, turnsDone } from './scriptedNotes.js';

const harness = durableHarness();

describe('cancelling a run from another process', () => {
  it('stops the work in flight; nothing after it runs, and the run never resumes', async () => {
    const log = await harness.toolLog('cancel');
    const server = await harness.server({
      script: (request: RecordedRequest) =>
        taskOf(request) === 'hold on' ? { toolCalls: [{ name: 'hold', arguments: {} }] } : { content: 'done' },
    });
    const worker = harness.worker('cancel-worker', server.baseURL, log);
    await worker.ready;
    const durable = await harness.client();
    const runId = await durable.enqueueRun({ runId: 'cancel-run', agent: 'holder', input: 'hold on' });
    const has = (line: string) => async () => ((await harness.lines(log)).includes(line) ? true : undefined);
    await until(has('cancel-run running-1-0 holding cancel-worker'), 'the tool to start');

    expect(await durable.cancel(runId)).toEqual({
      runId,
      status: 'cancelled',
      error: { code: 'RUN_CANCELLED', message: 'the run was cancelled' },
    });
    // The worker hears of it and stops the tool: it never finishes, and no model call follows.
    await until(has('cancel-run running-1-0 stopped cancel-worker'), 'the tool to be stopped');
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe('exit 0');

    expect(server.requests.map(taskOf)).toEqual(['hold on']);
    expect(await harness.parts(runId)).toEqual([{ id: runId, status: 'CANCELLED', steps: ['llm-1'] }]);
    await expect(durable.waitForRun(runId)).rejects.toThrow(RunCancelledError);
    expect(await durable.getRun(runId)).toMatchObject({ status: 'cancelled' });

    // A run cancelled while queued never starts; the cancelled run is not resumed by its worker.
    const queued = await durable.enqueueRun({ runId: 'cancel-queued', agent: 'holder', input: 'hold on' });
    expect(await durable.cancel(queued)).toMatchObject({ status: 'cancelled' });
    await harness.worker('cancel-worker', server.baseURL, log).ready;
    const after = await durable.enqueueRun({ runId: 'cancel-after', agent: 'recorder', input: 'say done' });
    expect(await durable.waitForRun(after)).toMatchObject({ status: 'finished', answer: 'done' });
    expect(server.requests.map(taskOf)).toEqual(['hold on', 'say done']);
    expect(await harness.lines(log)).toHaveLength(2);
    expect(await durable.cancel('cancel-nobody')).toBeUndefined();
    // Cancelling a run that ended changes nothing.
    expect(await durable.cancel(after)).toMatchObject({ status: 'ended', outcome: { answer: 'done' } });
  });

  it('stops a long run in its current part; no later part starts', async () => {
    const log = await harness.toolLog('cancel-long');
    let hold: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      hold = resolve;
    });
    const server = await harness.server({
      script: (request: RecordedRequest) => {
        // The third model call (the third part's first) never answers.
        if (turnsDone(request) < 2) return noteReply(request, 5);
        hold();
        return { content: 'never', stallAfter: 0 };
      },
    });
    const worker = harness.worker('cancel-long-worker', server.baseURL, log, { continueEvery: 1 });
    await worker.ready;
    const durable = await harness.client();
    const runId = await durable.enqueueRun({ runId: 'cancel-long', agent: 'recorder', input: 'record five notes' });
    await held;

    expect(await durable.cancel(runId)).toMatchObject({ status: 'cancelled' });
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe('exit 0');

    expect(await harness.parts(runId)).toEqual([
      { id: 'cancel-long', status: 'SUCCESS', steps: ['llm-1', 'running-1-0'] },
      { id: 'cancel-long~continued-2', status: 'SUCCESS', steps: ['llm-2', 'running-2-0'] },
      { id: 'cancel-long~continued-3', status: 'CANCELLED', steps: [] },
    ]);
    expect(server.requests.map(turnsDone)).toEqual([0, 1, 2]);
    expect(await harness.executions(log)).toEqual(['cancel-long running-1-0', 'cancel-long running-2-0']);
    expect(await durable.getRun(runId)).toMatchObject({ status: 'cancelled' });
    await expect(durable.waitForRun(runId)).rejects.toThrow(`run "${runId}" was cancelled`);
  });
});
