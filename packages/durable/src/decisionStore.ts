import { createHash } from 'node:crypto';
import pg from 'pg';
import type { DecisionKey, SignedDecision } from './decisions.js';
import { laterPartsPrefix } from './names.js';

/** A decision a worker did not take (no valid signature, or signed for something else), as it recorded it. */
export interface Refusal {
  readonly runId: string;
  /** What it claimed to decide: `answer:<effect id>` or `cancel`. */
  readonly subject: string;
  readonly reason: string;
  readonly noticedAt: string;
}

/**
 * The decisions made about runs, one per subject (an effect's answer, the run's cancel), and the
 * ones refused, in the runs' database (schema `openmanus`). The first decision recorded is the
 * one that stands: recording is a single insert, so of two sent at once exactly one wins.
 */
export interface DecisionStore {
  /**
   * Records `decision` unless a genuine one (signed by `key`) is recorded for its subject, and
   * calls `deliver` in the same transaction (the message to the run: both commit or neither).
   * Returns the decision recorded before when there was one, and then delivers nothing.
   */
  decide(
    key: DecisionKey,
    decision: SignedDecision,
    deliver?: (client: pg.PoolClient) => Promise<void>,
  ): Promise<SignedDecision | undefined>;
  /** The run's recorded answers, newest first, as stored (to be verified by the caller). */
  answersOf(runId: string): Promise<unknown[]>;
  /** The recorded cancels of these ids, as stored (to be verified by the caller). */
  cancelsOf(ids: readonly string[]): Promise<unknown[]>;
  /** Of these cancels of workflows (each with the time it was cancelled), the ones no worker has judged yet. */
  unjudged(cancels: readonly Cancelled[]): Promise<Cancelled[]>;
  /** Records a cancel as judged: genuine (signed), or forged and undone. */
  judged(cancel: Cancelled, genuine: boolean): Promise<void>;
  /** Records a refused decision; `false` when it was recorded already (a replay). */
  refuse(runId: string, subject: string, message: unknown, reason: string): Promise<boolean>;
  /** The refusals about a run (any of its parts) or a flow, oldest first. */
  refusals(runId: string): Promise<Refusal[]>;
  /** The workers' key as they last said it (its fingerprint), for a client to check its own against. */
  publishKey(workerId: string, fingerprint: string): Promise<void>;
  workersKey(): Promise<{ readonly workerId: string; readonly fingerprint: string } | undefined>;
  close(): Promise<void>;
}

/** A workflow cancelled at `at` (DBOS's `updatedAt`, ms). */
export interface Cancelled {
  readonly workflowId: string;
  readonly at: number;
}

const SCHEMA = `
CREATE SCHEMA IF NOT EXISTS openmanus;
CREATE TABLE IF NOT EXISTS openmanus.decisions (
  run_id text NOT NULL, subject text NOT NULL, decision jsonb NOT NULL,
  decided_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (run_id, subject));
CREATE TABLE IF NOT EXISTS openmanus.refusals (
  run_id text NOT NULL, subject text NOT NULL, digest text NOT NULL, reason text NOT NULL, message text NOT NULL,
  noticed_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (run_id, subject, digest));
CREATE TABLE IF NOT EXISTS openmanus.cancels_judged (
  workflow_id text NOT NULL, cancelled_at bigint NOT NULL, genuine boolean NOT NULL,
  PRIMARY KEY (workflow_id, cancelled_at));
CREATE TABLE IF NOT EXISTS openmanus.worker_keys (
  worker_id text PRIMARY KEY, fingerprint text NOT NULL, seen_at timestamptz NOT NULL DEFAULT now());`;

// What of a refused message is kept: enough to tell what it was.
const KEPT_MESSAGE = 2_000;

export function decisionStore(databaseUrl: string): DecisionStore {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 3 });
  pool.on('error', () => undefined);
  let ready: Promise<void> | undefined;
  // Made on first use by whoever comes first (a worker, or a client before any worker ran),
  // one at a time: concurrent CREATE … IF NOT EXISTS can still collide.
  const tables = () => {
    ready ??= inTransaction(pool, async (client) => {
      await client.query("SELECT pg_advisory_xact_lock(hashtext('openmanus:decision-tables'))");
      await client.query(SCHEMA);
    }).catch((error: unknown) => {
      ready = undefined;
      throw error;
    });
    return ready;
  };
  const query = async <Row extends pg.QueryResultRow>(sql: string, values: unknown[]) => {
    await tables();
    return (await pool.query<Row>(sql, values)).rows;
  };

  return {
    decide: async (key, decision, deliver) => {
      await tables();
      return inTransaction(pool, async (client) => {
        const row = [decision.runId, decision.subject, JSON.stringify(decision)];
        const inserted = await client.query(
          'INSERT INTO openmanus.decisions (run_id, subject, decision) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
          row,
        );
        if (inserted.rowCount === 0) {
          const { rows } = await client.query<{ decision: unknown }>(
            'SELECT decision FROM openmanus.decisions WHERE run_id = $1 AND subject = $2 FOR UPDATE',
            [decision.runId, decision.subject],
          );
          const before = key.verify(rows[0]?.decision);
          const genuine =
            before.ok && before.decision.runId === decision.runId && before.decision.subject === decision.subject;
          if (genuine) return before.decision;
          // A row no key holder wrote (database access alone): it decides nothing, this replaces it.
          await client.query(
            'UPDATE openmanus.decisions SET decision = $3, decided_at = now() WHERE run_id = $1 AND subject = $2',
            row,
          );
        }
        await deliver?.(client);
        return undefined;
      });
    },
    answersOf: async (runId) =>
      (
        await query<{ decision: unknown }>(
          `SELECT decision FROM openmanus.decisions WHERE run_id = $1 AND starts_with(subject, 'answer:')
           ORDER BY decided_at DESC LIMIT 100`,
          [runId],
        )
      ).map((row) => row.decision),
    cancelsOf: async (ids) =>
      (
        await query<{ decision: unknown }>(
          "SELECT decision FROM openmanus.decisions WHERE subject = 'cancel' AND run_id = ANY($1)",
          [ids],
        )
      ).map((row) => row.decision),
    unjudged: async (cancels) => {
      if (cancels.length === 0) return [];
      const rows = await query<{ workflow_id: string; cancelled_at: string }>(
        `SELECT c.workflow_id, c.cancelled_at FROM unnest($1::text[], $2::bigint[]) AS c (workflow_id, cancelled_at)
         WHERE NOT EXISTS (SELECT 1 FROM openmanus.cancels_judged j
                           WHERE j.workflow_id = c.workflow_id AND j.cancelled_at = c.cancelled_at)`,
        [cancels.map((c) => c.workflowId), cancels.map((c) => c.at)],
      );
      return rows.map((row) => ({ workflowId: row.workflow_id, at: Number(row.cancelled_at) }));
    },
    judged: async ({ workflowId, at }, genuine) => {
      await query(
        'INSERT INTO openmanus.cancels_judged (workflow_id, cancelled_at, genuine) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
        [workflowId, at, genuine],
      );
    },
    refuse: async (runId, subject, message, reason) => {
      const kept = (JSON.stringify(message) ?? String(message)).slice(0, KEPT_MESSAGE);
      const digest = createHash('sha256').update(kept).digest('hex');
      const rows = await query(
        `INSERT INTO openmanus.refusals (run_id, subject, digest, reason, message) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT DO NOTHING RETURNING 1`,
        [runId, subject, digest, reason, kept],
      );
      return rows.length > 0;
    },
    refusals: async (runId) =>
      (
        await query<{ subject: string; reason: string; noticed_at: Date }>(
          `SELECT subject, reason, noticed_at FROM openmanus.refusals
           WHERE run_id = $1 OR starts_with(run_id, $2) ORDER BY noticed_at`,
          [runId, laterPartsPrefix(runId)],
        )
      ).map((row) => ({ runId, subject: row.subject, reason: row.reason, noticedAt: row.noticed_at.toISOString() })),
    publishKey: async (workerId, fingerprint) => {
      await query(
        `INSERT INTO openmanus.worker_keys (worker_id, fingerprint) VALUES ($1, $2)
         ON CONFLICT (worker_id) DO UPDATE SET fingerprint = $2, seen_at = now()`,
        [workerId, fingerprint],
      );
    },
    workersKey: async () => {
      const [row] = await query<{ worker_id: string; fingerprint: string }>(
        'SELECT worker_id, fingerprint FROM openmanus.worker_keys ORDER BY seen_at DESC LIMIT 1',
        [],
      );
      return row ? { workerId: row.worker_id, fingerprint: row.fingerprint } : undefined;
    },
    close: () => pool.end(),
  };
}

async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
