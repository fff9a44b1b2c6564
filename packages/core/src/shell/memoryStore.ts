import type { AgentState } from '../kernel/state.js';
import { CheckpointConflictError, type CheckpointStore, type StoredRun } from './store.js';

/**
 * Runs kept in this process only (tests, short-lived hosts). States are immutable values, so
 * they are kept by reference, not copied.
 */
export function createMemoryStore<S extends object = AgentState>(): CheckpointStore<S> {
  const runs = new Map<string, StoredRun<S>>();
  return {
    // The check and the write happen before the first await, so no other save can come between them.
    async save(runId: string, state: S, expectedVersion: number): Promise<number> {
      const actual = runs.get(runId)?.version ?? 0;
      if (actual !== expectedVersion) throw new CheckpointConflictError(runId, expectedVersion, actual);
      runs.set(runId, { state, version: actual + 1 });
      return actual + 1;
    },
    async load(runId: string): Promise<StoredRun<S> | undefined> {
      return runs.get(runId);
    },
    async list(): Promise<readonly string[]> {
      return [...runs.keys()];
    },
    async delete(runId: string): Promise<void> {
      runs.delete(runId);
    },
  };
}
