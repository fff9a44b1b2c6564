import { hasErrorCode, OpenManusError } from '@openmanus/core';
import pg from 'pg';

/** Thrown when another live worker holds the id: two live workers must never share one. */
export class WorkerIdInUseError extends OpenManusError<'WORKER_ID_IN_USE'> {
  static readonly codes = ['WORKER_ID_IN_USE'] as const;
  override readonly name = 'WorkerIdInUseError';
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super('WORKER_ID_IN_USE', message, options);
  }
  static override isInstance(value: unknown): value is WorkerIdInUseError {
    return hasErrorCode(value, WorkerIdInUseError.codes);
  }
}

/**
 * A connection of the worker's own holding a session advisory lock on its id. Postgres releases
 * the lock when the process or the connection dies, so another worker taking it knows this one
 * is gone. Locks are per database: every worker locks in the runs' database (created here when
 * missing, before DBOS would).
 */
export interface WorkerLock {
  /** Tries another worker's lock: `true` means that worker is gone (release with `release`). */
  tryOther(workerId: string): Promise<boolean>;
  release(workerId: string): Promise<void>;
  /** Runs `work` while no other worker runs work under the same name (DBOS's schema migrations). */
  exclusively<T>(name: string, work: () => Promise<T>): Promise<T>;
  /** Releases this worker's id and closes the connection. */
  close(): Promise<void>;
}

const key = (workerId: string) => `openmanus-worker:${workerId}`;

export async function lockWorkerId(databaseUrl: string, workerId: string, waitMs = 2000): Promise<WorkerLock> {
  const client = await connectCreating(databaseUrl);
  const tryLock = async (name: string) =>
    (await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [name])).rows[0]
      ?.locked === true;
  try {
    // Another worker's reaper holds a dead worker's lock for a moment while it hands its runs on.
    const deadline = Date.now() + waitMs;
    while (!(await tryLock(key(workerId)))) {
      if (Date.now() > deadline) throw new WorkerIdInUseError(`worker id "${workerId}" is in use by a live worker`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (error) {
    await client.end();
    throw error;
  }
  return {
    tryOther: (id) => tryLock(key(id)),
    release: async (id) => {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [key(id)]);
    },
    exclusively: async (name, work) => {
      const held = `openmanus:${name}`;
      // Tried, not waited for: a statement waiting on the lock would hold a snapshot, which the
      // migrations' CREATE INDEX CONCURRENTLY in the lock's holder waits for (a deadlock).
      while (!(await tryLock(held))) await new Promise((resolve) => setTimeout(resolve, 100));
      try {
        return await work();
      } finally {
        await client.query('SELECT pg_advisory_unlock(hashtext($1))', [held]);
      }
    },
    close: () => client.end(),
  };
}

/** A connection to `url`, creating its database first when it does not exist yet. */
async function connectCreating(url: string): Promise<pg.Client> {
  try {
    return await connected(url);
  } catch (error) {
    if ((error as { code?: string }).code !== '3D000') throw error;
  }
  const target = new URL(url);
  const database = decodeURIComponent(target.pathname.slice(1));
  const maintenance = new URL(url);
  maintenance.pathname = '/postgres';
  const admin = await connected(maintenance.toString());
  try {
    await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(database)}`);
  } catch (error) {
    // Another worker created it meanwhile (42P04, or 23505 when both were creating it at once).
    const { code } = error as { code?: string };
    if (code !== '42P04' && code !== '23505') throw error;
  } finally {
    await admin.end();
  }
  return connected(url);
}

async function connected(url: string): Promise<pg.Client> {
  // Keepalives: a host that vanishes without closing its socket still loses its lock.
  const client = new pg.Client({ connectionString: url, keepAlive: true });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
  return client;
}
