import { DBOS } from '@dbos-inc/dbos-sdk';
import type { DecisionStore } from './decisionStore.js';
import { answerSubject, type DecisionKey } from './decisions.js';
import type { AnswerCheck } from './hostAnswers.js';
import { FLOW_WORKFLOW, RUN_QUEUE, RUN_WORKFLOW } from './names.js';
import type { WorkerLock } from './workerLock.js';

/** A worker's side of people's decisions: it takes only those signed with its key. */
export interface DecisionGuard {
  /** An answer the run may take, or `undefined` (refused, and recorded as refused). */
  readonly checkAnswer: AnswerCheck;
  /** Records the worker's own cancel of a run (a flow out of time stopping its step's run), signed. */
  signCancel(runId: string, why: string): Promise<void>;
  /**
   * Judges the cancels no worker has judged yet: a cancel made through DBOS (or its tables)
   * without a decision signed with the key, for the workflow or one that started it, is undone
   * (the workflow resumes from its last recorded step, as after a crash) and recorded as refused.
   */
  undoForgedCancels(): Promise<void>;
}

// How far up a workflow's parents a cancel may have come from (a flow, a long run's earlier parts).
const MAX_ANCESTORS = 1_000;

export function decisionGuard(
  key: DecisionKey,
  store: DecisionStore,
  lock: WorkerLock,
  workerId: string,
  applicationVersion: string,
): DecisionGuard {
  const refuse = async (runId: string, subject: string, message: unknown, reason: string) => {
    try {
      if (await store.refuse(runId, subject, message, reason))
        console.warn(`openmanus worker ${workerId}: refused a decision (${subject}) for "${runId}": ${reason}`);
    } catch (error) {
      console.warn(`openmanus worker ${workerId}: could not record a refused decision: ${String(error)}`);
    }
  };

  const signedCancel = async (workflowId: string) => {
    const lineage: string[] = [];
    for (let id: string | undefined = workflowId; id !== undefined && lineage.length < MAX_ANCESTORS; ) {
      lineage.push(id);
      id = (await DBOS.getWorkflowStatus(id))?.parentWorkflowID;
    }
    return (await store.cancelsOf(lineage)).some((message) => {
      const verdict = key.verify(message);
      return verdict.ok && verdict.decision.subject === 'cancel' && lineage.includes(verdict.decision.runId);
    });
  };

  return {
    checkAnswer: async (message, runId, effectId) => {
      const verdict = key.verify(message);
      const subject = answerSubject(effectId);
      if (!verdict.ok) return void (await refuse(runId, subject, message, verdict.reason));
      const { decision } = verdict;
      if (decision.runId !== runId || decision.subject !== subject || !('answer' in decision))
        return void (await refuse(
          runId,
          subject,
          message,
          `it was signed for ${decision.subject} of "${decision.runId}"`,
        ));
      return decision.answer;
    },
    signCancel: async (runId, why) => {
      await store.decide(key, key.sign({ runId, subject: 'cancel' }, `worker ${workerId} (${why})`));
    },
    undoForgedCancels: async () => {
      const cancelled = await DBOS.listWorkflows({
        status: 'CANCELLED',
        workflowName: [RUN_WORKFLOW, FLOW_WORKFLOW],
        applicationVersion,
        loadInput: false,
        loadOutput: false,
      });
      const cancels = cancelled.map((w) => ({ workflowId: w.workflowID, at: w.updatedAt ?? w.createdAt }));
      for (const cancel of await store.unjudged(cancels)) {
        if (await signedCancel(cancel.workflowId)) {
          await store.judged(cancel, true);
          continue;
        }
        // One worker at a time, and only while it is still the cancel judged here.
        await lock.exclusively('undo-cancels', async () => {
          const now = await DBOS.getWorkflowStatus(cancel.workflowId);
          if (now?.status !== 'CANCELLED' || (now.updatedAt ?? now.createdAt) !== cancel.at) return;
          await DBOS.resumeWorkflows([cancel.workflowId], { queueName: RUN_QUEUE });
          await store.judged(cancel, false);
          await refuse(
            cancel.workflowId,
            'cancel',
            cancel,
            'cancelled without a decision signed with the workers\u2019 key: resumed from its last recorded step',
          );
        });
      }
    },
  };
}
