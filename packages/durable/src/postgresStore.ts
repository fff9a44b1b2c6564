import { type AgentState, CheckpointConflictError, type CheckpointStore, type StoredRun } from '@openmanus/core';
import pg from 'pg';

export interface PostgresStoreOptions {
  /** The database, as a URL (`postgres://user:password@host:5432/db`); or give `pool`. */
  readonly connectionString?: string;
  /** A pool of your own (closed by you, not by `close`; its `error` events are yours to handle). */
  readonly pool?: pg.Pool;
  /**
   * An idle connection of the store's own pool that broke (Postgres restarted, a connection was
   * ended): reported here and dropped, the next query opens another. Default: ignored.
   */
  readonly onError?: (error: Error) => void;
}

export interface PostgresStore<S extends object = AgentState> extends CheckpointStore<S> {
  /** Ends the pool the store made (not one it was given). */
  close(): Promise<void>;
}

// Text, not jsonb: jsonb refuses the \u0000 escape a tool's output may carry, and the state is
// only ever read back whole.
const SCHEMA = `
CREATE SCHEMA IF NOT EXISTS openmanus;
CREATE TABLE IF NOT EXISTS openmanus.checkpoints (
  run_id text PRIMARY KEY, version integer NOT NULL, state text NOT NULL, status text,
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp());
CREATE INDEX IF NOT EXISTS checkpoints_by_update ON openmanus.checkpoints (updated_at DESC);`;

/** unique_violation, duplicate_table, duplicate_schema. */
const RACED = new Set(['23505', '42P07', '42P06']);

const statusOf = (state: object) => {
  const { status } = state as { status?: unknown };
  return typeof status === 'string' ? status : null;
};

/** A pool whose broken idle connections are reported, not thrown: pg emits them as `error` events, fatal unheard. */
function ownPool({ connectionString, onError }: PostgresStoreOptions): pg.Pool {
  const pool = new pg.Pool({ connectionString, max: 4 });
  pool.on('error', (error) => onError?.(error));
  return pool;
}

/**
 * Runs checkpointed in Postgres (table `openmanus.checkpoints`, made on first use): each save is
 * one statement that checks the version it expects, so several processes may share the runs
 * and a decision taken in one is never overwritten by a stale save in another.
 */
export function createPostgresStore<S extends object = AgentState>(options: PostgresStoreOptions): PostgresStore<S> {
  if (!options.pool && !options.connectionString)
    throw new TypeError('createPostgresStore needs a connectionString or a pool');
  const pool = options.pool ?? ownPool(options);
  let ready: Promise<unknown> | undefined;
  // Made once per store; a failure is not cached, so the next call tries again. Two processes
  // making it at once can collide on the catalog (IF NOT EXISTS does not lock): the loser retries.
  const schema = () => {
    ready ??= pool
      .query(SCHEMA)
      .catch((error: unknown) =>
        RACED.has((error as { code?: string }).code ?? '') ? pool.query(SCHEMA) : Promise.reject(error),
      )
      .catch((error: unknown) => {
        ready = undefined;
        throw error;
      });
    return ready;
  };
  const versionOf = async (runId: string) => {
    const { rows } = await pool.query<{ version: number }>(
      'SELECT version FROM openmanus.checkpoints WHERE run_id = $1',
      [runId],
    );
    return rows[0]?.version ?? 0;
  };

  return {
    async save(runId, state, expectedVersion) {
      await schema();
      const text = JSON.stringify(state);
      const status = statusOf(state);
      const { rows } =
        expectedVersion === 0
          ? await pool.query<{ version: number }>(
              'INSERT INTO openmanus.checkpoints (run_id, version, state, status) VALUES ($1, 1, $2, $3) ' +
                'ON CONFLICT (run_id) DO NOTHING RETURNING version',
              [runId, text, status],
            )
          : await pool.query<{ version: number }>(
              'UPDATE openmanus.checkpoints SET version = version + 1, state = $3, status = $4, ' +
                'updated_at = clock_timestamp() WHERE run_id = $1 AND version = $2 RETURNING version',
              [runId, expectedVersion, text, status],
            );
      const saved = rows[0]?.version;
      if (saved === undefined) throw new CheckpointConflictError(runId, expectedVersion, await versionOf(runId));
      return saved;
    },
    async load(runId): Promise<StoredRun<S> | undefined> {
      await schema();
      const { rows } = await pool.query<{ version: number; state: string }>(
        'SELECT version, state FROM openmanus.checkpoints WHERE run_id = $1',
        [runId],
      );
      const row = rows[0];
      return row && { version: row.version, state: JSON.parse(row.state) as S };
    },
    async list() {
      await schema();
      const { rows } = await pool.query<{ run_id: string }>(
        'SELECT run_id FROM openmanus.checkpoints ORDER BY updated_at DESC',
      );
      return rows.map((row) => row.run_id);
    },
    async delete(runId) {
      await schema();
      await pool.query('DELETE FROM openmanus.checkpoints WHERE run_id = $1', [runId]);
    },
    async close() {
      if (!options.pool) await pool.end();
    },
  };
}
