// A run's sandbox: one per run and provider, a resource of the run (made on first use, removed when
// the run ends), whether the host gave the run a provider or a tool was built with one.
import type { Sandbox, SandboxProvider } from '../shell/sandboxPort.js';
import type { ResourcePool, RunScope } from '../shell/scope.js';

type Resources = Pick<ResourcePool, 'get'>;

/** The run's sandbox from `provider`, as a resource of `pool`: the same one for every tool of the run. */
export function sandboxOf(
  provider: SandboxProvider,
  pool: Resources,
  runId: string,
  workspace: string | undefined,
  signal: () => AbortSignal,
): () => Promise<Sandbox> {
  return () =>
    pool.get(
      `sandbox:${provider.name}`,
      () => provider.create({ runId, signal: signal(), ...(workspace !== undefined ? { workspace } : {}) }),
      (sandbox) => sandbox.close(),
    );
}

/**
 * Where a tool runs: the run's own sandbox when the host gave the run a provider, else the
 * sandbox of the tool's `provider` for this run (shared by the tools built with it), else
 * nowhere (undefined: the tool runs on this host). Gives the way to open it, on first use.
 */
export function sandboxFor(scope: RunScope, provider?: SandboxProvider): (() => Promise<Sandbox>) | undefined {
  if (scope.sandbox) return scope.sandbox;
  if (!provider) return undefined;
  return sandboxOf(provider, { get: scope.resource }, scope.runId, scope.workspace, () => scope.signal);
}
