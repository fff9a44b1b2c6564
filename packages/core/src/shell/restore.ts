import { hasErrorCode, OpenManusError } from '../errors.js';
import type { AgentState } from '../kernel/state.js';

/**
 * Why a run was refused before anything was sent:
 * - `STATE_DAMAGED`: the saved state fails the schema, or its fields leave nothing to run;
 * - `STATE_NEWER`: a newer version of the package wrote it;
 * - `RUN_NOT_FOUND`: the store has no run of that id (or no store was given to load it from);
 * - `RUN_UNFINISHED`: a new task on a run still running or paused (it would be lost);
 * - `RUN_NOT_WAITING`: an answer to something the run does not wait for (it has finished, or waits for another input).
 */
export type InvalidStateCode = 'STATE_DAMAGED' | 'STATE_NEWER' | 'RUN_NOT_FOUND' | 'RUN_UNFINISHED' | 'RUN_NOT_WAITING';

/** A saved state, or an input to it, that cannot be run; `code` says which way. Nothing was sent or saved. */
export class InvalidStateError extends OpenManusError<InvalidStateCode> {
  static readonly codes: readonly InvalidStateCode[] = [
    'STATE_DAMAGED',
    'STATE_NEWER',
    'RUN_NOT_FOUND',
    'RUN_UNFINISHED',
    'RUN_NOT_WAITING',
  ];
  override readonly name = 'InvalidStateError';
  constructor(message: string, code: InvalidStateCode = 'STATE_DAMAGED', options?: { readonly cause?: unknown }) {
    super(code, message, options);
  }
  static override isInstance(value: unknown): value is InvalidStateError {
    return hasErrorCode(value, InvalidStateError.codes);
  }
}

/**
 * The one check of a state a run starts from, whichever way it came (`run`'s `state`, `resume`,
 * `resumeWith`, a store's copy): checked whole, older versions migrated, before anything is sent.
 * The schema loads on first use. A valid current state comes back as the very object given.
 */
export async function restore(saved: unknown): Promise<AgentState> {
  const { restoreState } = await import('../kernel/stateSchema.js');
  const restored = restoreState(saved);
  if (!restored.isOk()) throw new InvalidStateError(restored.error.message, restored.error.code);
  return restored.value;
}
