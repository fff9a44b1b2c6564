import type { AnyEffect, Message, StepFunction } from '@openmanus/core';

const DROPPED = '[the page state of this earlier step is left out; the newest one is below]';

/**
 * The messages with every browser_use result but the newest `keep` cut to its first line (what the
 * action did): a page state is stale once a newer one exists, and a long browsing run would
 * otherwise send every one of them with every request.
 */
export function prunePageStates(messages: readonly Message[], keep = 1): readonly Message[] {
  let seen = 0;
  let out: Message[] | undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role !== 'tool' || message.name !== 'browser_use') continue;
    if (++seen <= keep) continue;
    const firstLine = message.content.split('\n', 1)[0] ?? '';
    if (firstLine === message.content) continue;
    out ??= [...messages];
    out[i] = { ...message, content: `${firstLine}\n${DROPPED}` };
  }
  return out ?? messages;
}

/** `step` with older page states left out of each model request it asks for (the history keeps them whole). */
export function withPrunedPageStates(step: StepFunction): StepFunction {
  return (config, state, event) => {
    const [next, effects] = step(config, state, event);
    const pruned = effects.map((effect): AnyEffect => {
      if (effect.type !== 'callLlm') return effect;
      const messages = prunePageStates(effect.request.messages);
      return messages === effect.request.messages ? effect : { ...effect, request: { ...effect.request, messages } };
    });
    return [next, pruned];
  };
}
