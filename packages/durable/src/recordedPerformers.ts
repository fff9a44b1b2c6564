import type { AgentPerformers, HostPerformers } from '@openmanus/core';
import type { DurableRuntime } from './runtime.js';

/**
 * Core's own performers with each call of a model, a tool or a context source run as a step of
 * `runtime`, keyed by its effect id. Effect ids derive from the run's state, so a replayed run asks
 * for the same keys in the same order and gets the recorded events back; only work that never
 * finished runs again. A tool running again sees the same `scope.runId` and `scope.effectId`: its
 * idempotency key.
 */
export function recordedPerformers(runtime: DurableRuntime): (defaults: AgentPerformers) => HostPerformers {
  return (defaults) => ({
    callLlm: recorded(runtime, defaults.callLlm),
    callTool: recorded(runtime, defaults.callTool),
    gatherContext: recorded(runtime, defaults.gatherContext),
  });
}

function recorded<E extends { readonly id: string }, C, R>(
  runtime: DurableRuntime,
  perform: (effect: E, context: C) => R,
) {
  // The step is asked for when the effect is performed, before any await: the order of keys is the state's.
  return (effect: E, context: C): Promise<Awaited<R>> =>
    runtime.runStep(effect.id, async (): Promise<Awaited<R>> => await perform(effect, context));
}
