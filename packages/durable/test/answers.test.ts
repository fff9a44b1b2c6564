import type { PendingInput } from '@openmanus/core';
import type { RecordedRequest } from '@openmanus/core/testing';
import { describe, expect, it } from 'vitest';
import type { DurableClient } from '../src/client.js';
import { durableHarness, until } from './harness.js';
import { noteReply, taskOf, turnsDone } from './scriptedNotes.js';

const harness = durableHarness();

/** The approval the run waits for, once its published progress shows it. */
const awaitedApproval = (durable: DurableClient, runId: string) =>
  until(async (): Promise<PendingInput | undefined> => {
    const info = await durable.getRun(runId);
    return info?.status === 'running' && info.progress?.status === 'awaiting_approval'
      ? info.progress.pending[0]
      : undefined;
  }, `run ${runId} to wait for an approval`);

describe('approvals answered from another process', () => {
  it('a run waits durably: its worker dies, the approval is sent, a restarted worker runs the tool once', async () => {
    const log = await harness.toolLog('approved');
    const server = await harness.server({ script: (request: RecordedRequest) => noteReply(request, 1) });
    const first = harness.worker('approver', server.baseURL, log);
    await first.ready;
    const durable = await harness.client();
    const runId = await durable.enqueueRun({ runId: 'approved-run', agent: 'guarded', input: 'record a note' });

    const pending = await awaitedApproval(durable, runId);
    expect(pending).toMatchObject({ kind: 'approval', call: { name: 'record' }, args: { note: 'note 1' } });
    first.child.kill('SIGKILL');
    await first.exited;
    await durable.answer(runId, { type: 'approvalGiven', effectId: pending.effectId });
    expect(await harness.executions(log)).toEqual([]);

    const restarted = harness.worker('approver', server.baseURL, log);
    await restarted.ready;
    expect(await durable.waitForRun(runId)).toMatchObject({ status: 'finished', answer: 'done' });
    expect(await harness.executions(log)).toEqual(['approved-run running-1-0']);
    expect(server.requests.map(turnsDone)).toEqual([0, 1]);
  });

  it('a denial reaches the model with its reason and the tool never runs', async () => {
    const log = await harness.toolLog('denied');
    const server = await harness.server({ script: (request: RecordedRequest) => noteReply(request, 1) });
    await harness.worker('denier', server.baseURL, log).ready;
    const durable = await harness.client();
    const runId = await durable.enqueueRun({ runId: 'denied-run', agent: 'guarded', input: 'record a note' });

    const pending = await awaitedApproval(durable, runId);
    await durable.answer(runId, { type: 'approvalDenied', effectId: pending.effectId, reason: 'not today' });

    expect(await durable.waitForRun(runId)).toMatchObject({ status: 'finished', answer: 'done' });
    expect(await harness.executions(log)).toEqual([]);
    const toolMessage = server.requests[1]?.messages.find((message) => message.role === 'tool');
    expect(String(toolMessage?.content)).toContain('not today');
  });
});

describe('questions for people answered from another process', () => {
  it('the run waits for the reply, and the model reads it', async () => {
    const log = await harness.toolLog('asked');
    const server = await harness.server({
      script: (request: RecordedRequest) =>
        turnsDone(request) === 0
          ? { toolCalls: [{ name: 'ask_human', arguments: { inquire: 'Which city?' } }] }
          : { content: 'done' },
    });
    await harness.worker('asker-worker', server.baseURL, log).ready;
    const durable = await harness.client();
    const runId = await durable.enqueueRun({ runId: 'asked-run', agent: 'asker', input: 'plan a trip' });

    const pending = await until(async () => {
      const info = await durable.getRun(runId);
      return info?.status === 'running' && info.progress?.status === 'awaiting_human'
        ? info.progress.pending[0]
        : undefined;
    }, 'the run to ask its question');
    expect(pending).toMatchObject({ kind: 'human', question: 'Which city?' });
    await durable.answer(runId, { type: 'humanReplied', effectId: pending.effectId, answer: 'Kyoto' });

    expect(await durable.waitForRun(runId)).toMatchObject({ status: 'finished', answer: 'done' });
    const replied = server.requests[1]?.messages.find((message) => message.role === 'tool');
    expect(String(replied?.content)).toContain('Kyoto');
  });
});

describe("a tool's form for a person and request for the model (MCP elicitation and sampling)", () => {
  // They are answered within the tool's call, which cannot wait for a message as a question can.
  const script = (request: RecordedRequest) => {
    if (taskOf(request) === 'A note for the booking.') return { content: 'By the window.' };
    return turnsDone(request) === 0 ? { toolCalls: [{ name: 'book', arguments: {} }] } : { content: 'done' };
  };
  const toolResult = (requests: readonly RecordedRequest[]) =>
    String(requests.at(-1)?.messages.find((message) => message.role === 'tool')?.content);

  it("are cancelled and refused when the worker's agent has no callbacks for them", async () => {
    const server = await harness.server({ script });
    await harness.worker('booking-worker', server.baseURL, await harness.toolLog('booked')).ready;
    const durable = await harness.client();
    const runId = await durable.enqueueRun({ runId: 'booked-run', agent: 'booker', input: 'book a table' });
    expect(await durable.waitForRun(runId)).toMatchObject({ status: 'finished', answer: 'done' });
    expect(toolResult(server.requests)).toMatch(/^form: cancel; note: none \(.*onSampling/);
    expect(server.requests).toHaveLength(2);
  });

  it('go to the callbacks the worker was given with the agent', async () => {
    const server = await harness.server({ script });
    await harness.worker('answering-worker', server.baseURL, await harness.toolLog('answered-booking')).ready;
    const durable = await harness.client();
    const runId = await durable.enqueueRun({ runId: 'answered-run', agent: 'answeredBooker', input: 'book a table' });
    expect(await durable.waitForRun(runId)).toMatchObject({ status: 'finished', answer: 'done' });
    expect(toolResult(server.requests)).toBe('form: accept 2; note: By the window.');
    expect(server.requests).toHaveLength(3);
  });
});
