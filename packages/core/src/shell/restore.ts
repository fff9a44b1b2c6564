import type { AgentState } from '../kernel/state.js';

/** A saved state that cannot be run: damaged, or from a newer version of the package. */
export class InvalidStateError extends Error {
  override readonly name = 'InvalidStateError';
}

/** Checks a saved state whole (migrating older versions) before anything is sent; the schema loads on first use. */
export async function restore(saved: unknown): Promise<AgentState> {
  const { restoreState } = await import('../kernel/stateSchema.js');
  const restored = restoreState(saved);
  if (!restored.ok) throw new InvalidStateError(restored.error);
  return restored.value;
}
