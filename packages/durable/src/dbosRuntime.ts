import { DBOS } from '@dbos-inc/dbos-sdk';
import type { DurableRuntime } from './runtime.js';

/**
 * The runtime of the DBOS workflow this is called from: steps are `DBOS.runStep` (recorded in
 * Postgres under the workflow id and a step number, checked against the key on replay). `runId`
 * is the run's id when the workflow is a later part of it (default: the workflow's id).
 */
export function dbosRuntime(runId = DBOS.workflowID): DurableRuntime {
  if (!DBOS.isInWorkflow() || runId === undefined) throw new Error('dbosRuntime() must be called in a DBOS workflow');
  // DBOS tells a step its workflow was cancelled (`DBOS.cancelWorkflow`, from any process); the
  // run hears it from whichever step is in flight. Between steps DBOS itself stops the workflow.
  const cancel = new AbortController();
  const hearCancel = () => {
    const heard = DBOS.stepStatus?.cancelSignal;
    heard?.addEventListener('abort', () => cancel.abort(heard.reason), { once: true });
  };
  return {
    runId,
    cancelled: cancel.signal,
    runStep: (key, work) =>
      DBOS.runStep(
        () => {
          hearCancel();
          return work();
        },
        { name: key },
      ),
    waitForSignal: (topic, timeoutMs) => DBOS.recv(topic, timeoutMs / 1000),
    // Recorded only from the workflow's body: a change made inside a step (a tool's progress) is
    // not written on its own (a replay would not write it again); the next one carries it.
    publish: async (key, value) => {
      if (!DBOS.isInStep()) await DBOS.setEvent(key, value);
    },
    stream: async (key, value) => {
      if (!DBOS.isInStep()) await DBOS.writeStream(key, value);
    },
  };
}
