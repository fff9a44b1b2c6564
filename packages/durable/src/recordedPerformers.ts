import type { Agent, AgentPerformers } from '@openmanus/core';
import { interruptedNote } from '@openmanus/core/kernel';
import type { DurableRuntime } from './runtime.js';

/**
 * Core's own performers with each call of a model, a tool or a context source run as a step of
 * `runtime`, keyed by its effect id (a call that goes on with a person's answer, by the id the answer
 * has in the run: `running-2-0/approval-1-0`). Effect ids derive from the run's state, so a replayed run asks
 * for the same keys in the same order and gets the recorded events back; only work that never
 * finished runs again. A tool running again sees the same `scope.runId` and `scope.effectId`: its
 * idempotency key. A tool marked `atMostOnce` never runs again: its start is recorded first, and a
 * replay that finds a start but no result tells the model the call was interrupted.
 */
export function recordedPerformers(
  runtime: DurableRuntime,
  agent: Agent,
): (defaults: AgentPerformers) => Pick<AgentPerformers, 'callLlm' | 'gatherContext' | 'callTool'> {
  // This execution of the run: a start recorded by another one means that one began the call.
  const execution = crypto.randomUUID();
  return (defaults) => ({
    callLlm: recorded(runtime, defaults.callLlm),
    gatherContext: recorded(runtime, defaults.gatherContext),
    callTool: (effect, context) => {
      const name = effect.call.name;
      const spec = (context.state().tools ?? agent.config.tools).find((tool) => tool.name === name);
      // A call paused on a person goes on with the answer under the same effect id: that is work
      // of its own (the paused part is recorded as paused), keyed by the answer it goes on with.
      const key = effect.answer ? `${effect.id}/${effect.answer.effectId}` : effect.id;
      if (!spec?.atMostOnce) return runtime.runStep(key, async () => defaults.callTool(effect, context));
      // Both steps are asked for now, in this order, so the keys' order stays the state's.
      const start = runtime.runStep(`${key}:start`, async () => execution);
      return runtime.runStep(key, async () =>
        (await start) === execution
          ? defaults.callTool(effect, context)
          : { type: 'toolCompleted', effectId: effect.id, output: interruptedNote(name), isError: true },
      );
    },
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
