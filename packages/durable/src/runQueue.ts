import { DBOS, DBOSClient } from '@dbos-inc/dbos-sdk';
import { APPLICATION, RUN_QUEUE } from './names.js';

/**
 * Sets the run queue's limits before this worker launches: DBOS keeps a queue's settings in
 * Postgres, shared by every worker, and reads them when it launches (then every second), so
 * setting them after would let this worker take runs under the settings it found.
 */
export async function registerRunQueue(
  databaseUrl: string,
  limits: { readonly workerConcurrency: number; readonly minPollingIntervalMs: number },
): Promise<void> {
  await DBOS.migrate(databaseUrl);
  const client = await DBOSClient.create({ systemDatabaseUrl: databaseUrl, applicationName: APPLICATION });
  try {
    await client.registerQueue(RUN_QUEUE, limits);
  } finally {
    await client.destroy();
  }
}
