// The JSON-file checkpoint store's face: its implementation (jsonLinesStore.ts) loads on first use.
import type { AgentState } from '../kernel/state.js';
import { lazyPromise } from '../lazyModule.js';
import type { CheckpointStore } from './store.js';

/**
 * Runs as append-only JSON-lines files in `directory`, one per run: a save appends what changed
 * and the file is rewritten as one snapshot now and then, so a save costs the same late in a
 * run as early; writers in several processes can share the directory (see jsonLinesStore.ts).
 */
export function createFileStore<S extends object = AgentState>(directory: string): CheckpointStore<S> {
  const store = lazyPromise(async () => (await import('./jsonLinesStore.js')).openJsonLinesStore<S>(directory));
  return {
    save: async (runId, state, expectedVersion) => (await store()).save(runId, state, expectedVersion),
    load: async (runId) => (await store()).load(runId),
    list: async () => (await store()).list(),
    delete: async (runId) => (await store()).delete(runId),
  };
}
