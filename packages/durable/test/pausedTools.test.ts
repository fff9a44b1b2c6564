import type { PendingInput, RunStatus } from '@openmanus/core';
import type { RecordedRequest, ScriptedReply } from '@openmanus/core/testing';
import { describe, expect, it } from 'vitest';
import type { DurableClient } from '../src/client.js';
import { durableHarness, until } from './harness.js';
import { taskOf, turnsDone } from './scriptedNotes.js';

// A tool that pauses on a person (an agent tool's child waiting for an approval, an MCP server's
// form with nobody at hand) is no question a performer waits on: the durable run waits for its
// answer itself, and the call goes on with it as a step of its own.

const harness = durableHarness();

/** What the run waits for, once its published progress shows it waiting with `status`. */
const awaited = (durable: DurableClient, runId: string, status: RunStatus) =>
  until(async (): Promise<PendingInput | undefined> => {
    const info = await durable.getRun(runId);
    return info?.status === 'running' && info.progress?.status === status ? info.progress.pending[0] : undefined;
  }, `run ${runId} to be ${status}`);

/** The parent hands `file the note` to its clerk, whose model files it; both then answer. */
const delegation = (request: RecordedRequest): ScriptedReply => {
  const done = turnsDone(request) > 0;
  if (taskOf(request) === 'file the note')
    return done ? { content: 'filed it' } : { toolCalls: [{ name: 'file', arguments: { note: 'note 1' } }] };
  return done ? { content: 'done' } : { toolCalls: [{ name: 'clerk', arguments: { task: 'file the note' } }] };
};

const toolResult = (request: RecordedRequest | undefined) =>
  String(request?.messages.find((message) => message.role === 'tool')?.content);

describe("an agent tool's child waiting for an approval", () => {
  it('pauses the durable run; the approval sent to the run lets the child go on, and the run finishes', async () => {
    const log = await harness.toolLog('delegated');
    const server = await harness.server({ script: delegation });
    await harness.worker('delegating-worker', server.baseURL, log).ready;
    const durable = await harness.client();
    const runId = await durable.enqueueRun({ runId: 'delegated-run', agent: 'delegator', input: 'delegate a note' });

    const pending = await awaited(durable, runId, 'awaiting_approval');
    expect(pending).toMatchObject({
      kind: 'approval',
      effectId: 'running-1-0/approval-1-0',
      call: { name: 'file' },
      args: { note: 'note 1' },
    });
    expect(await harness.executions(log)).toEqual([]);
    await durable.answer(runId, { type: 'approvalGiven', effectId: pending.effectId });

    expect(await durable.waitForRun(runId)).toMatchObject({ status: 'finished', answer: 'done' });
    expect(await harness.executions(log)).toEqual(['delegated-run/running-1-0 running-1-0']);
    expect(toolResult(server.requests.at(-1))).toBe('filed it');
    // The paused call and the call that went on with the approval are steps of their own.
    expect(await harness.parts(runId)).toEqual([
      { id: runId, status: 'SUCCESS', steps: ['llm-1', 'running-1-0', 'running-1-0/approval-1-0', 'llm-2'] },
    ]);
  });

  it("waits on when its worker dies: a restarted worker takes the approval and runs the child's tool once", async () => {
    const log = await harness.toolLog('delegated-crash');
    const server = await harness.server({ script: delegation });
    const first = harness.worker('delegate-crasher', server.baseURL, log);
    await first.ready;
    const durable = await harness.client();
    const runId = await durable.enqueueRun({ runId: 'crashed-delegation', agent: 'delegator', input: 'delegate' });

    const pending = await awaited(durable, runId, 'awaiting_approval');
    first.child.kill('SIGKILL');
    await first.exited;
    await durable.answer(runId, { type: 'approvalGiven', effectId: pending.effectId });

    await harness.worker('delegate-crasher', server.baseURL, log).ready;
    expect(await durable.waitForRun(runId)).toMatchObject({ status: 'finished', answer: 'done' });
    expect(await harness.executions(log)).toEqual(['crashed-delegation/running-1-0 running-1-0']);
    // Replayed from Postgres: the parent's first model turn and the paused child were not done again.
    expect(server.requests.map((request) => [taskOf(request), turnsDone(request)])).toEqual([
      ['delegate', 0],
      ['file the note', 0],
      ['file the note', 1],
      ['delegate', 1],
    ]);
  });

  it('an answer of another kind than the input asks for leaves the run paused on it', async () => {
    const server = await harness.server({ script: delegation });
    await harness.worker('mistaken-worker', server.baseURL, await harness.toolLog('mistaken')).ready;
    const durable = await harness.client();
    const runId = await durable.enqueueRun({ runId: 'mistaken-run', agent: 'delegator', input: 'delegate a note' });

    const pending = await awaited(durable, runId, 'awaiting_approval');
    await durable.answer(runId, { type: 'humanReplied', effectId: pending.effectId, answer: 'yes' });

    expect(await durable.waitForRun(runId)).toMatchObject({ status: 'awaiting_approval', pending: [pending] });
  });
});

describe("a tool's form for a person, paused on (an MCP server's question with nobody at hand)", () => {
  const reservation = (request: RecordedRequest): ScriptedReply =>
    turnsDone(request) === 0 ? { toolCalls: [{ name: 'reserve', arguments: {} }] } : { content: 'done' };

  it('is answered with client.answer like any question, and the tool goes on with the answer', async () => {
    const log = await harness.toolLog('reserved');
    const server = await harness.server({ script: reservation });
    await harness.worker('reserving-worker', server.baseURL, log).ready;
    const durable = await harness.client();
    const runId = await durable.enqueueRun({ runId: 'reserved-run', agent: 'reserver', input: 'reserve a table' });

    const pending = await awaited(durable, runId, 'awaiting_human');
    expect(pending).toMatchObject({
      kind: 'human',
      effectId: 'running-1-0/elicit-1',
      question: 'How many people?',
      form: { message: 'How many?' },
    });
    await durable.answer(runId, { type: 'humanReplied', effectId: pending.effectId, answer: '{"people":3}' });

    expect(await durable.waitForRun(runId)).toMatchObject({ status: 'finished', answer: 'done' });
    expect(toolResult(server.requests[1])).toBe('reserved for {"people":3}');
    expect((await harness.lines(log)).map((line) => line.split(' ').slice(1, 3).join(' '))).toEqual([
      'running-1-0 asking',
      'running-1-0 answered',
    ]);
    // An at-most-once tool: the call that went on with the answer has a start of its own.
    expect(await harness.parts(runId)).toEqual([
      {
        id: runId,
        status: 'SUCCESS',
        steps: [
          'llm-1',
          'running-1-0:start',
          'running-1-0',
          'running-1-0/elicit-1:start',
          'running-1-0/elicit-1',
          'llm-2',
        ],
      },
    ]);
  });

  it('a part of one model turn hands the run on after the answered call, at its next model call', async () => {
    const server = await harness.server({ script: reservation });
    const log = await harness.toolLog('reserved-parts');
    await harness.worker('parted-worker', server.baseURL, log, { continueEvery: 1 }).ready;
    const durable = await harness.client();
    const runId = await durable.enqueueRun({ runId: 'reserved-parts', agent: 'reserver', input: 'reserve a table' });

    const pending = await awaited(durable, runId, 'awaiting_human');
    await durable.answer(runId, { type: 'humanReplied', effectId: pending.effectId, answer: '{"people":2}' });

    expect(await durable.waitForRun(runId)).toMatchObject({ status: 'finished', answer: 'done' });
    expect(toolResult(server.requests[1])).toBe('reserved for {"people":2}');
    expect(await harness.parts(runId)).toEqual([
      {
        id: runId,
        status: 'SUCCESS',
        steps: ['llm-1', 'running-1-0:start', 'running-1-0', 'running-1-0/elicit-1:start', 'running-1-0/elicit-1'],
      },
      { id: `${runId}~continued-2`, status: 'SUCCESS', steps: ['llm-2'] },
    ]);
  });
});
