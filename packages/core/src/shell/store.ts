import { hasErrorCode, OpenManusError } from '../errors.js';
import type { AgentState } from '../kernel/state.js';

/** A saved run as a store returns it: the state and the version it was saved as. */
export interface StoredRun<S extends object = AgentState> {
  readonly state: S;
  /** Counts saves of this run: 1 after the first. */
  readonly version: number;
}

/** Another writer saved the run since the version this one expected. */
export class CheckpointConflictError extends OpenManusError<'CHECKPOINT_CONFLICT'> {
  static readonly codes = ['CHECKPOINT_CONFLICT'] as const;
  override readonly name = 'CheckpointConflictError';
  constructor(
    readonly runId: string,
    readonly expected: number,
    readonly actual: number,
  ) {
    super('CHECKPOINT_CONFLICT', `run ${runId} is at version ${actual}, not ${expected}: another writer saved it`);
  }
  static override isInstance(value: unknown): value is CheckpointConflictError {
    return hasErrorCode(value, CheckpointConflictError.codes);
  }
}

/**
 * Where runs are checkpointed. `save` succeeds only when the stored version is
 * `expectedVersion` (0: the run is not stored yet), so two writers cannot overwrite each other.
 * Agent runs store their `AgentState`; a flow stores its own state in the same kinds of store.
 */
export interface CheckpointStore<S extends object = AgentState> {
  /** Resolves with the new version; rejects with `CheckpointConflictError` on a version mismatch. */
  save(runId: string, state: S, expectedVersion: number): Promise<number>;
  load(runId: string): Promise<StoredRun<S> | undefined>;
  list(): Promise<readonly string[]>;
  delete(runId: string): Promise<void>;
}
