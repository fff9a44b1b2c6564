import { compactRunItem } from '@openmanus/core';
import { type FlowItem, planOf } from '@openmanus/flow';

/**
 * A flow item for `--json`: as core's `compactRunItem` does for runs, the flow's events carry its
 * status and plan instead of its whole state, model requests their size, executors' runs their
 * prompt without their memory, and executors' items are compacted by core.
 */
export function compactFlowItem(item: FlowItem): object {
  switch (item.type) {
    case 'event': {
      const { event, state } = item;
      const compact =
        event.type === 'agentFinished' ? { ...event, report: withoutState(event.report) } : (event as object);
      return { type: 'event', event: compact, status: state.status, plan: planOf(state) };
    }
    case 'effect': {
      const { effect } = item;
      if (effect.type === 'callLlm') {
        const { id, purpose, request } = effect;
        return { type: 'effect', effect: { type: 'callLlm', id, purpose, messages: request.messages.length } };
      }
      return { type: 'effect', effect: withoutState(effect) };
    }
    case 'agent':
      return { ...item, item: compactRunItem(item.item) };
    case 'result':
      return { type: 'result', result: withoutState(item.result) };
    case 'observation':
      return item;
  }
}

function withoutState<T extends { readonly state?: unknown }>(value: T): Omit<T, 'state'> {
  const { state: _state, ...rest } = value;
  return rest;
}
