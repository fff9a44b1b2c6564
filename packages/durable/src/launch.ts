import { DBOS, DBOSClient } from '@dbos-inc/dbos-sdk';
import { APPLICATION, RUN_QUEUE } from './names.js';
import type { WorkerLock } from './workerLock.js';

export interface RunQueueLimits {
  readonly workerConcurrency: number;
  readonly minPollingIntervalMs: number;
}

/**
 * Launches DBOS for this worker with the run queue's limits in place. One worker launches at a
 * time: DBOS migrates its tables on launch, and its migrations are not safe to run at once. The
 * limits are set before: DBOS keeps a queue's settings in Postgres, shared by every worker, and
 * reads them when it launches (then every second), so setting them only after would let this
 * worker take runs under the settings it found.
 */
export async function launchWithRunQueue(lock: WorkerLock, databaseUrl: string, limits: RunQueueLimits): Promise<void> {
  await lock.exclusively('launch', async () => {
    await presetRunQueue(databaseUrl, limits);
    await DBOS.launch();
  });
  // On a new database, where there was nothing to set before.
  await DBOS.registerQueue(RUN_QUEUE, limits);
}

async function presetRunQueue(databaseUrl: string, limits: RunQueueLimits): Promise<void> {
  const quiet = { info: () => {}, debug: () => {}, warn: console.warn, error: console.error };
  const client = await DBOSClient.create({
    systemDatabaseUrl: databaseUrl,
    applicationName: APPLICATION,
    logger: quiet,
  });
  try {
    await client.registerQueue(RUN_QUEUE, limits);
  } catch (error) {
    // DBOS's tables are not there yet (a new database): the launch makes them.
    const { code } = error as { code?: string };
    if (code !== '42P01' && code !== '3F000') throw error;
  } finally {
    await client.destroy();
  }
}
