import { DBOS } from '@dbos-inc/dbos-sdk';
import { FLOW_WORKFLOW, RUN_QUEUE, RUN_WORKFLOW } from './names.js';
import type { WorkerLock } from './workerLock.js';

export interface Reaper {
  stop(): Promise<void>;
}

/**
 * Hands the runs of dead workers to the queue, where live workers take them and replay them from
 * their last recorded step (DBOS alone resumes a worker's runs only when that worker id starts
 * again). A worker is dead when its lock can be taken; the runs are listed again under the lock,
 * so two reapers never requeue a run a live worker has already taken.
 */
export function startReaper(
  lock: WorkerLock,
  self: string,
  applicationVersion: string,
  intervalMs: number,
  /** More work for each round (the worker's check of cancels). */
  alsoEachRound: () => Promise<void> = async () => {},
): Reaper {
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<void> = Promise.resolve();
  let stopped = false;

  const pendingOf = async (executorId?: string) =>
    DBOS.listWorkflows({
      status: 'PENDING',
      // Flows too: a flow handed on replays and awaits its executor's run (handed on as a run) again.
      workflowName: [RUN_WORKFLOW, FLOW_WORKFLOW],
      applicationVersion,
      ...(executorId !== undefined ? { executorId } : {}),
      loadInput: false,
      loadOutput: false,
    });

  const reap = async () => {
    const owners = new Set((await pendingOf()).map((run) => run.executorId));
    for (const owner of owners) {
      if (owner === undefined || owner === self || stopped) continue;
      if (!(await lock.tryOther(owner))) continue;
      try {
        const runs = await pendingOf(owner);
        if (runs.length > 0)
          await DBOS.resumeWorkflows(
            runs.map((run) => run.workflowID),
            { queueName: RUN_QUEUE },
          );
      } finally {
        await lock.release(owner);
      }
    }
  };

  const schedule = () => {
    timer = setTimeout(() => {
      round = reap()
        .then(alsoEachRound)
        .catch((error: unknown) => console.warn(`openmanus worker ${self}: reaping failed: ${String(error)}`))
        .finally(() => {
          if (!stopped) schedule();
        });
    }, intervalMs);
  };
  schedule();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await round;
    },
  };
}
