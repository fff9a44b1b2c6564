import { DBOS } from '@dbos-inc/dbos-sdk';
import type { DurableRuntime } from './runtime.js';

/**
 * The runtime of the DBOS workflow this is called from: steps are `DBOS.runStep` (recorded in
 * Postgres under the workflow id and a step number, checked against the key on replay).
 */
export function dbosRuntime(): DurableRuntime {
  const runId = DBOS.workflowID;
  if (!DBOS.isInWorkflow() || runId === undefined) throw new Error('dbosRuntime() must be called in a DBOS workflow');
  return {
    runId,
    runStep: (key, work) => DBOS.runStep(work, { name: key }),
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
