import { type Agent, createRunEmitter, type RunItem, type RunOptions } from '@openmanus/core';
import { createRunTracer, type TracingOptions } from './runTracer.js';

const ITEM_TYPES: readonly RunItem['type'][] = ['effect', 'event', 'observation', 'result'];

/**
 * The run options with tracing added: `run`, `stream`, `resume` and `resumeWith` given them
 * trace that run (child agents run by `agentTool` included, under their tool call). It listens
 * to the run's items through `emitter`; an emitter already in the options still gets every item.
 * Make one per run: the run's span starts in the context active when this is called.
 */
export function withTracing<O extends RunOptions>(agent: Agent, options: O, tracing: TracingOptions = {}): O {
  const record = createRunTracer({
    ...tracing,
    agent: agent.config.name,
    ...(agent.config.description ? { description: agent.config.description } : {}),
    model: options.llm.model,
  });
  const host = options.emitter;
  const emitter = createRunEmitter();
  for (const type of ITEM_TYPES) {
    emitter.on(type, (item: RunItem) => {
      record(item);
      host?.emit(type, item as never);
    });
  }
  // Deltas are not traced; they are passed on only to a host that takes them (so the run streams only then).
  if (host && host.listenerCount('delta') > 0) emitter.on('delta', (item) => host.emit('delta', item));
  return { ...options, emitter };
}
