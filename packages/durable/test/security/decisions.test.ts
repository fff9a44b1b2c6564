// People's decisions about durable runs (approvals, denials, answers, cancels) from someone who
// can reach the runs' database but lacks the workers' decision key: each is refused, recorded as
// refused, and changes nothing; the same decision signed with the key is taken.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { DBOSClient } from '@dbos-inc/dbos-sdk';
import type { PendingInput } from '@openmanus/core';
import type { RecordedRequest } from '@openmanus/core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { createDurableClient, type DurableClient, type Refusal } from '../../src/client.js';
import {
  AlreadyDecidedError,
  answerSubject,
  DecisionKeyError,
  decisionKey,
  generateDecisionKey,
} from '../../src/decisions.js';
import { durableHarness, until } from '../harness.js';
import { startPostgres } from '../postgres.js';
import { noteReply, taskOf, turnsDone } from '../scriptedNotes.js';

const harness = durableHarness();
const run = promisify(execFile);

// Record a note (each call waiting for an approval), or ask a person which city.
const script = (request: RecordedRequest) =>
  taskOf(request) === 'plan a trip'
    ? turnsDone(request) === 0
      ? { toolCalls: [{ name: 'ask_human', arguments: { inquire: 'Which city?' } }] }
      : { content: 'done' }
    : noteReply(request, 1);

let attacker: DBOSClient | undefined;
/** Someone with the database's URL (write access to DBOS's tables) and no key. */
const intruder = async () => {
  attacker ??= await DBOSClient.create({ systemDatabaseUrl: harness.databaseUrl() });
  return attacker;
};
afterAll(() => attacker?.destroy());

const waitingFor = (durable: DurableClient, runId: string, status: 'awaiting_approval' | 'awaiting_human') =>
  until(async (): Promise<PendingInput | undefined> => {
    const info = await durable.getRun(runId);
    return info?.status === 'running' && info.progress?.status === status ? info.progress.pending[0] : undefined;
  }, `run ${runId} to be ${status}`);

const refusedCount = (durable: DurableClient, runId: string, count: number) =>
  until(async (): Promise<Refusal[] | undefined> => {
    const refusals = await durable.refusals(runId);
    return refusals.length >= count ? refusals : undefined;
  }, `${count} refusal(s) of decisions about ${runId}`);

describe('decisions made with database access alone', () => {
  it('an approval without the key is refused and the call does not run; a signed one runs it once', async () => {
    const log = await harness.toolLog('forged-approval');
    const server = await harness.server({ script });
    await harness.worker('forged-approval-worker', server.baseURL, log).ready;
    const durable = await harness.client();
    const runId = await durable.enqueueRun({ runId: 'forged-approval', agent: 'guarded', input: 'record a note' });
    const { effectId } = await waitingFor(durable, runId, 'awaiting_approval');

    const dbos = await intruder();
    // An answer as the client sent it before decisions were signed.
    await dbos.send(runId, { type: 'approvalGiven', effectId }, effectId);
    // A genuine decision, signed with the key, but for another run's call of the same id: replayed here.
    const elsewhere = decisionKey(harness.decisionKey).sign(
      { runId: 'another-run', subject: answerSubject(effectId), answer: { type: 'approvalGiven', effectId } },
      'alice@host',
    );
    await dbos.send(runId, elsewhere, effectId);
    // A signed-looking decision for this very call, with a signature of another key.
    const otherKey = decisionKey(generateDecisionKey()).sign(
      { runId, subject: answerSubject(effectId), answer: { type: 'approvalGiven', effectId } },
      'mallory@host',
    );
    await dbos.send(runId, otherKey, effectId);

    const refusals = await refusedCount(durable, runId, 3);
    expect(refusals.map((refusal) => [refusal.subject, refusal.reason])).toEqual([
      [answerSubject(effectId), 'not a signed decision'],
      [answerSubject(effectId), `it was signed for ${answerSubject(effectId)} of "another-run"`],
      [answerSubject(effectId), 'its signature is not the workers\u2019 key\u2019s'],
    ]);
    // The run still waits for that approval, and the tool never ran.
    expect(await waitingFor(durable, runId, 'awaiting_approval')).toMatchObject({ effectId });
    expect(await harness.executions(log)).toEqual([]);

    expect(await durable.approve(runId)).toMatchObject([{ effectId }]);
    expect(await durable.waitForRun(runId)).toMatchObject({ status: 'finished', answer: 'done' });
    expect(await harness.executions(log)).toEqual([`${runId} running-1-0`]);
  });

  it('an answer to a question without the key is refused; the model reads only the signed one', async () => {
    const log = await harness.toolLog('forged-answer');
    const server = await harness.server({ script });
    await harness.worker('forged-answer-worker', server.baseURL, log).ready;
    const durable = await harness.client();
    const runId = await durable.enqueueRun({ runId: 'forged-answer', agent: 'asker', input: 'plan a trip' });
    const { effectId } = await waitingFor(durable, runId, 'awaiting_human');

    await (await intruder()).send(runId, { type: 'humanReplied', effectId, answer: 'Pyongyang' }, effectId);
    await refusedCount(durable, runId, 1);
    expect(await waitingFor(durable, runId, 'awaiting_human')).toMatchObject({ effectId });

    await durable.answer(runId, { type: 'humanReplied', effectId, answer: 'Kyoto' });
    expect(await durable.waitForRun(runId)).toMatchObject({ status: 'finished', answer: 'done' });
    const replies = server.requests.flatMap((request) => request.messages.filter((m) => m.role === 'tool'));
    expect(replies.map((message) => String(message.content))).toEqual([expect.stringContaining('Kyoto')]);
  });

  it('a cancel through DBOS without the key is undone: the run goes on where it was', async () => {
    const log = await harness.toolLog('forged-cancel');
    const server = await harness.server({ script });
    await harness.worker('forged-cancel-worker', server.baseURL, log).ready;
    const durable = await harness.client();
    const runId = await durable.enqueueRun({ runId: 'forged-cancel', agent: 'guarded', input: 'record a note' });
    const { effectId } = await waitingFor(durable, runId, 'awaiting_approval');

    await (await intruder()).cancelWorkflow(runId);
    const [refusal] = await refusedCount(durable, runId, 1);
    expect(refusal).toMatchObject({ subject: 'cancel', reason: expect.stringContaining('resumed') });
    // Resumed from its last recorded step: it waits for the same approval again, the model not asked again.
    expect(await waitingFor(durable, runId, 'awaiting_approval')).toMatchObject({ effectId });
    expect(server.requests).toHaveLength(1);

    await durable.approve(runId);
    expect(await durable.waitForRun(runId)).toMatchObject({ status: 'finished', answer: 'done' });
    expect(await harness.executions(log)).toEqual([`${runId} running-1-0`]);
  });

  it('a client without the key, or with another one, decides nothing and is told why', async () => {
    const log = await harness.toolLog('keyless');
    const server = await harness.server({ script });
    await harness.worker('keyless-worker', server.baseURL, log).ready;
    const durable = await harness.client();
    const runId = await durable.enqueueRun({ runId: 'keyless', agent: 'guarded', input: 'record a note' });
    await waitingFor(durable, runId, 'awaiting_approval');

    const keyless = await createDurableClient({ databaseUrl: harness.databaseUrl(), applicationVersion: 'test-1' });
    const wrongKey = await createDurableClient({
      databaseUrl: harness.databaseUrl(),
      applicationVersion: 'test-1',
      decisionKey: generateDecisionKey(),
    });
    try {
      await expect(keyless.approve(runId)).rejects.toThrow(DecisionKeyError);
      await expect(keyless.cancel(runId)).rejects.toThrow('needs the workers\u2019 decision key');
      await expect(wrongKey.approve(runId)).rejects.toThrow('this decision key is not the workers\u2019');
      await expect(wrongKey.cancel(runId)).rejects.toThrow(DecisionKeyError);
    } finally {
      await keyless.close();
      await wrongKey.close();
    }
    expect(await durable.getRun(runId)).toMatchObject({ status: 'running', progress: { status: 'awaiting_approval' } });
    await durable.approve(runId, { reject: 'no' });
    expect(await durable.waitForRun(runId)).toMatchObject({ status: 'finished' });
    expect(await harness.executions(log)).toEqual([]);
  });
});

describe('two decisions about the same call at once', () => {
  it('an approval and a rejection sent together: exactly one stands, the other is told who decided', async () => {
    const log = await harness.toolLog('race');
    const server = await harness.server({ script });
    await harness.worker('race-worker', server.baseURL, log).ready;
    const durable = await harness.client();
    const runId = await durable.enqueueRun({ runId: 'race', agent: 'guarded', input: 'record a note' });
    await waitingFor(durable, runId, 'awaiting_approval');

    const other = await createDurableClient({
      databaseUrl: harness.databaseUrl(),
      applicationVersion: 'test-1',
      decisionKey: harness.decisionKey,
      decidedBy: 'bob@desk',
    });
    let results: PromiseSettledResult<unknown>[];
    try {
      results = await Promise.allSettled([durable.approve(runId), other.approve(runId, { reject: 'not now' })]);
    } finally {
      await other.close();
    }
    const [approved, rejected] = results;
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    const lost = results.find((result) => result.status === 'rejected');
    expect(lost?.reason).toBeInstanceOf(AlreadyDecidedError);
    const outcome = await durable.waitForRun(runId);
    if (approved?.status === 'fulfilled') {
      expect(String(lost?.reason)).toMatch(/already decided: approved by \S+@\S+ at /);
      expect(await harness.executions(log)).toEqual([`${runId} running-1-0`]);
    } else {
      expect(rejected?.status).toBe('fulfilled');
      expect(String(lost?.reason)).toContain('already decided: rejected ("not now") by bob@desk at ');
      expect(await harness.executions(log)).toEqual([]);
    }
    expect(outcome).toMatchObject({ status: 'finished' });
    // A third decision, after the run took the first, is told the same.
    await expect(durable.approve(runId)).rejects.toThrow('is not waiting for an approval');
  });
});

describe('scripts/postgres.sh', () => {
  it('its cluster takes only the generated password: another local user (uid 65534) cannot connect', async () => {
    const postgres = await startPostgres();
    try {
      const psql = (uid: number, url: string) =>
        run(
          'setpriv',
          [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', 'psql', '-w', '-tA', '-c', 'SELECT 1', url],
          {
            env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
          },
        );
      const withoutPassword = `postgresql://postgres@127.0.0.1:${postgres.port}/postgres`;
      await expect(psql(65534, withoutPassword)).rejects.toMatchObject({
        stderr: expect.stringContaining('password'),
      });
      // Not the uid: no one gets in without the password, and with it anyone does.
      await expect(psql(0, withoutPassword)).rejects.toMatchObject({ stderr: expect.stringContaining('password') });
      expect((await psql(65534, postgres.url('postgres'))).stdout.trim()).toBe('1');
    } finally {
      await postgres.stop();
    }
  });
});
