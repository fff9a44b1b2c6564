import { type AgentEvent, type AgentState, compactRunItem, type RunItem } from '@openmanus/core';
import { diffState } from '@openmanus/core/internal';
import type { LlmRequest } from '@openmanus/core/kernel';
import type { RunJournal, SentMessage, SentRequest } from './journal.js';

/**
 * A model request against the state it was made from: runs of the state's own messages (found by
 * identity: the reducer puts the same objects in the request) as ranges, anything else inline.
 */
function sentRequest(request: LlmRequest, state: AgentState | undefined, sameTools: boolean): SentRequest {
  const index = new Map(state?.messages.map((message, at) => [message, at]));
  const messages: SentMessage[] = [];
  for (const message of request.messages) {
    const at = index.get(message);
    const last = messages.at(-1);
    if (at === undefined) messages.push({ message });
    else if (last && 'to' in last && last.to === at) messages[messages.length - 1] = { from: last.from, to: at + 1 };
    else messages.push({ from: at, to: at + 1 });
  }
  return { messages, ...(sameTools ? {} : { tools: request.tools }), toolChoice: request.toolChoice };
}

/** Writes one leg of a run into the journal, transition `after + 1` onwards. */
export function legRecorder(journal: RunJournal, runId: string) {
  let n = journal.summary(runId).transitions;
  let previous: AgentState | undefined;
  let tools: LlmRequest['tools'] | undefined;
  return {
    /** A decision the server took itself (an approval, a cancel of a paused run): a transition of the run. */
    decided(event: AgentEvent, before: AgentState, after: AgentState) {
      n++;
      // A run journaled from here on (it was in the store before the server journaled) starts whole.
      const full = n === 1;
      const delta = diffState(full ? {} : before, after);
      journal.append(runId, { kind: 'event', n, at: Date.now(), event, delta, ...(full ? { full: true } : {}) });
      previous = undefined;
    },
    item(item: RunItem) {
      const at = Date.now();
      if (item.origin) {
        journal.append(runId, { kind: 'child', at, origin: item.origin, item: childItem(item) });
        return;
      }
      if (item.type === 'event') {
        n++;
        // The leg's first state comes from the run's own read of the store: as objects it shares
        // nothing with what this recorder saw, so it is kept whole.
        const delta = diffState(previous ?? {}, item.state);
        journal.append(runId, { kind: 'event', n, at, event: item.event, delta, ...(previous ? {} : { full: true }) });
        previous = item.state;
        return;
      }
      if (item.type !== 'effect') return;
      const { effect } = item;
      if (effect.type === 'callLlm') {
        const request = sentRequest(effect.request, previous, effect.request.tools === tools);
        tools = effect.request.tools;
        journal.append(runId, {
          kind: 'effect',
          at,
          n,
          effectId: effect.id,
          effectType: effect.type,
          effect: { type: effect.type, id: effect.id },
          request,
        });
        return;
      }
      journal.append(runId, { kind: 'effect', at, n, effectId: effect.id, effectType: effect.type, effect });
    },
  };
}

/** What a child run did, as the studio nests it: compact, its replies and tool results kept. */
function childItem(item: RunItem): object {
  if (item.type === 'effect' && item.effect.type === 'callTool') return item;
  if (item.type === 'event' && (item.event.type === 'llmResponded' || item.event.type === 'toolCompleted')) {
    const { status, step } = item.state;
    return { type: 'event', event: item.event, status, step };
  }
  return compactRunItem(item);
}

export type LegRecorder = ReturnType<typeof legRecorder>;
