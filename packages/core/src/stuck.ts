import type { AgentConfig } from './agent.js';
import type { AssistantMessage } from './messages.js';
import type { StuckState } from './state.js';

/** FNV-1a, 32 bit: a short deterministic key for a turn or a call. */
export function hashText(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(36);
}

const callKey = (name: string, args: string) => hashText(`${name}\u0000${args.trim()}`);

export const stuckHint = (detail: string) =>
  `You seem to be repeating yourself (${detail}). That approach is not working: ` +
  'change strategy, try a different tool or different arguments, or finish if the task is done.';

export const emptyStuckState: StuckState = { turns: {}, calls: {} };

/**
 * Records an assistant turn and says whether the agent looks stuck: the same whole turn
 * (text and calls) seen `duplicateThreshold` times before, or the same call (name and
 * arguments) made `repeatedCallThreshold` times before. The hint is for the next request only.
 */
export function recordTurn(config: AgentConfig, state: StuckState, message: AssistantMessage): StuckState {
  const calls = message.toolCalls ?? [];
  if (message.content.trim() === '' && calls.length === 0) return { turns: state.turns, calls: state.calls };
  const signature = [message.content.trim(), ...calls.map((c) => `${c.name}(${c.arguments.trim()})`)].join('\u0000');
  const turnKey = hashText(signature);
  const seenTurn = state.turns[turnKey] ?? 0;
  const turns = { ...state.turns, [turnKey]: seenTurn + 1 };
  const callCounts = { ...state.calls };
  let repeatedCall: string | undefined;
  for (const call of calls) {
    const key = callKey(call.name, call.arguments);
    const seen = callCounts[key] ?? 0;
    if (seen >= config.repeatedCallThreshold && !repeatedCall) repeatedCall = call.name;
    callCounts[key] = seen + 1;
  }
  const hint =
    seenTurn >= config.duplicateThreshold
      ? stuckHint(`the same reply ${seenTurn + 1} times`)
      : repeatedCall
        ? stuckHint(`the same ${repeatedCall} call with the same arguments again`)
        : undefined;
  return hint ? { turns, calls: callCounts, hint } : { turns, calls: callCounts };
}
