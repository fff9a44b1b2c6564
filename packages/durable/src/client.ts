import { hostname, userInfo } from 'node:os';
import { DBOSClient } from '@dbos-inc/dbos-sdk';
import type { HostAnswer, PendingInput, RunOutcome } from '@openmanus/core';
import { RunCancelledError } from './cancelled.js';
import { decisionStore, type Refusal } from './decisionStore.js';
import {
  AlreadyDecidedError,
  answerSubject,
  type Decision,
  DecisionKeyError,
  decisionKey,
  type SignedDecision,
} from './decisions.js';
import { type DurableFlowClient, flowClient } from './durableFlowClient.js';
import type { RunEventItem, RunProgress } from './durableRun.js';
import { APPLICATION, checkRunId, RUN_WORKFLOW, type RunRequest } from './names.js';
import { type RunInfo, runsOf } from './runs.js';

export { type Refusal, RunCancelledError, type RunInfo };

export interface DurableClientOptions {
  readonly databaseUrl: string;
  /**
   * The workers' decision key (`startWorker({ decisionKey })`): answers, approvals and cancels
   * are signed with it, and the workers take no other. Without it the client reads and enqueues
   * but decides nothing (a `DecisionKeyError`).
   */
  readonly decisionKey?: string;
  /** Who decides, as the decisions say it (signed with them; default user@host). */
  readonly decidedBy?: string;
  /** The workers' application version: only workers of this version take the runs enqueued (default: the newest). */
  readonly applicationVersion?: string;
  /** How often `waitForRun` and `waitForFlow` check the run, in ms (default 1000). */
  readonly pollingIntervalMs?: number;
}

export interface EnqueueRunOptions extends RunRequest {
  /** The run's id (default a new UUID); enqueueing an id again returns the run already there. */
  readonly runId?: string;
}

export interface ApproveOptions {
  /** The approval to answer (default: every one the run waits for). */
  readonly effectId?: string;
  /** Denies instead, with this reason (the model reads it). */
  readonly reject?: string;
}

export interface DurableClient extends DurableFlowClient {
  /** Queues a run for the workers and returns its id. */
  enqueueRun(options: EnqueueRunOptions): Promise<string>;
  /** The run's status now, or `undefined` for an id never enqueued. */
  getRun(runId: string): Promise<RunInfo | undefined>;
  /**
   * Answers what the run waits for (its progress's `pending`): `{ type: 'approvalGiven', effectId }`,
   * `approvalDenied` with a reason, or `humanReplied` with the answer, signed with the decision
   * key. The first decision about an effect stands: a later one throws `AlreadyDecidedError`
   * (its `decision` says what was decided, by whom, when). A `DecisionKeyError` without the key,
   * or with a key that is not the workers'.
   */
  answer(runId: string, answer: HostAnswer): Promise<void>;
  /**
   * Approves (or, with `reject`, denies) the calls the run waits to have approved; returns them.
   * Throws when the run waits for no such approval, and as `answer` does.
   */
  approve(runId: string, options?: ApproveOptions): Promise<readonly PendingInput[]>;
  /**
   * Stops the run, wherever it runs: nothing more of it is recorded, work in flight is stopped
   * (within about a second), and it never resumes. Returns the run's status after (`cancelled`,
   * or how it had ended before), or `undefined` for an id never enqueued. The run of a flow's
   * step (`{flowId}/{effect id}`) can be cancelled on its own: the flow takes it as a failed
   * attempt at the step (tried again up to its limit, then blocked). To stop a flow, `cancelFlow`.
   * Signed with the decision key: the workers undo a cancel that is not (one made through DBOS).
   */
  cancel(runId: string): Promise<RunInfo | undefined>;
  /** The decisions about a run or a flow that the workers refused (not signed with their key), oldest first. */
  refusals(runId: string): Promise<Refusal[]>;
  /**
   * The newest decision recorded about what the run waited for, of a kind (`approval`: an
   * approval or a denial; `human`: an answer), or about `effectId`: who decided, and when.
   */
  lastDecision(runId: string, kind: 'approval' | 'human', effectId?: string): Promise<SignedDecision | undefined>;
  /** The run's transitions from the first, as they happen; ends when the run ends. */
  streamEvents(runId: string): AsyncIterable<RunEventItem>;
  /** Waits for the run's outcome (a pause for a person is an outcome too); a `RunCancelledError` if it was cancelled. */
  waitForRun(runId: string): Promise<RunOutcome>;
  close(): Promise<void>;
}

/**
 * A client for any process (an API server, a CLI): enqueues runs and flows and reads them; runs
 * nothing itself. A long run is several workflows (it continues as a fresh one every so many
 * turns); the client follows them, so a run is one id throughout.
 */
export async function createDurableClient(options: DurableClientOptions): Promise<DurableClient> {
  const key = options.decisionKey === undefined ? undefined : decisionKey(options.decisionKey);
  const decidedBy = options.decidedBy ?? `${userInfo().username}@${hostname()}`;
  const client = await DBOSClient.create({ systemDatabaseUrl: options.databaseUrl, applicationName: APPLICATION });
  const store = decisionStore(options.databaseUrl);
  const runs = runsOf(client, {
    pollingIntervalMs: options.pollingIntervalMs ?? 1000,
    ...(options.applicationVersion ? { applicationVersion: options.applicationVersion } : {}),
  });
  const getRun = (runId: string) => runs.info<RunOutcome, RunProgress>(runId, 'run');

  /** Signs `decision` with the key, once it is known to be the workers' (they would refuse it otherwise). */
  const signed = async (decision: Decision) => {
    if (!key)
      throw new DecisionKeyError(
        'deciding for a run needs the workers\u2019 decision key (createDurableClient({ decisionKey }))',
      );
    const workers = await store.workersKey();
    if (workers && workers.fingerprint !== key.fingerprint)
      throw new DecisionKeyError(
        `this decision key is not the workers\u2019 (worker ${workers.workerId} uses another): they would refuse it`,
      );
    return { key, decision: key.sign(decision, decidedBy) };
  };

  const answer = async (runId: string, given: HostAnswer) => {
    // The part waiting for a person is the newest: a run never continues while it waits.
    const parts = await runs.newestParts(runId);
    if (!parts) throw new Error(`no run has the id "${runId}"`);
    const { key: signing, decision } = await signed({ runId, subject: answerSubject(given.effectId), answer: given });
    // Recorded and sent in one transaction: the first decision about the effect is the one sent.
    const before = await store.decide(signing, decision, (pg) =>
      client.sendInTransaction(pg, parts.head.workflowID, decision, given.effectId, decision.nonce),
    );
    if (before) throw new AlreadyDecidedError(before);
  };

  const lastDecision: DurableClient['lastDecision'] = async (runId, kind, effectId) => {
    // Only a key holder's decisions count; without the key, none can be told from a forgery.
    if (!key) return undefined;
    for (const stored of await store.answersOf(runId)) {
      const verdict = key.verify(stored);
      if (!verdict.ok || verdict.decision.runId !== runId || !('answer' in verdict.decision)) continue;
      const { answer } = verdict.decision;
      const ofKind = kind === 'human' ? answer.type === 'humanReplied' : answer.type !== 'humanReplied';
      if (ofKind && (effectId === undefined || answer.effectId === effectId)) return verdict.decision;
    }
    return undefined;
  };

  /** Records a signed cancel of `id` (kept when one is there), then cancels it through DBOS. */
  const cancel = async (id: string) => {
    const { key: signing, decision } = await signed({ runId: id, subject: 'cancel' });
    await store.decide(signing, decision);
    await runs.cancel(id);
  };

  return {
    ...flowClient(runs, cancel),
    enqueueRun: async ({ runId = crypto.randomUUID(), agent, input }) => {
      checkRunId(runId);
      const request: RunRequest = { agent, input };
      return runs.enqueue(RUN_WORKFLOW, runId, request);
    },
    getRun,
    answer,
    approve: async (runId, { effectId, reject } = {}) => {
      const info = await getRun(runId);
      if (!info) throw new Error(`no run has the id "${runId}"`);
      const waiting = info.status === 'running' ? (info.progress?.pending ?? []) : [];
      const approvals = waiting.filter(
        (input) => input.kind === 'approval' && (effectId === undefined || input.effectId === effectId),
      );
      if (approvals.length === 0) {
        const what = effectId === undefined ? 'an approval' : `the approval of ${effectId}`;
        const waits = `run "${runId}" is not waiting for ${what} (it is ${info.status})`;
        // It may have been a moment ago: whoever decided first is named.
        const before = await lastDecision(runId, 'approval', effectId);
        throw before ? new AlreadyDecidedError(before, waits) : new Error(waits);
      }
      for (const { effectId: id } of approvals)
        await answer(
          runId,
          reject === undefined
            ? { type: 'approvalGiven', effectId: id }
            : { type: 'approvalDenied', effectId: id, reason: reject },
        );
      return approvals;
    },
    cancel: async (runId) => {
      if (!(await runs.newestParts(runId))) return undefined;
      await cancel(runId);
      return getRun(runId);
    },
    refusals: (runId) => store.refusals(runId),
    lastDecision,
    streamEvents: (runId) => runs.events<RunEventItem>(runId),
    waitForRun: (runId) => runs.result<RunOutcome>(runId, 'run'),
    close: async () => {
      await client.destroy();
      await store.close();
    },
  };
}
