import type { AgentConfig } from './agent.js';
import type { AssistantMessage } from './messages.js';

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

/** What stuck detection remembers between steps (`state.policies.stuck`). */
export interface StuckMemory {
  /** Hashes of the most recent assistant turns (text and calls), oldest first. */
  readonly turns: readonly string[];
  /** Hashes of the most recent tool calls (name and arguments), oldest first. */
  readonly calls: readonly string[];
  /** The hint to send with the next request, if the last step looked stuck. */
  readonly hint?: string;
}

/** How far back repeats are looked for: a bounded window keeps each step O(1) however long the run. */
export const STUCK_WINDOW = 32;

const remember = (recent: readonly string[], keys: readonly string[]) => {
  const next = [...recent, ...keys];
  return next.length > STUCK_WINDOW ? next.slice(next.length - STUCK_WINDOW) : next;
};

const countOf = (recent: readonly string[], key: string) => recent.reduce((n, k) => (k === key ? n + 1 : n), 0);

/**
 * Records an assistant turn and says whether the agent looks stuck: among the recent turns,
 * the same whole turn (text and calls) `duplicateThreshold` times before, or the same call
 * (name and arguments) `repeatedCallThreshold` times before. The hint is for the next request only.
 */
export function recordTurn(
  config: AgentConfig,
  memory: StuckMemory | undefined,
  message: AssistantMessage,
): StuckMemory {
  const state = memory ?? { turns: [], calls: [] };
  const calls = message.toolCalls ?? [];
  if (message.content.trim() === '' && calls.length === 0) return { turns: state.turns, calls: state.calls };
  const signature = [message.content.trim(), ...calls.map((c) => `${c.name}(${c.arguments.trim()})`)].join('\u0000');
  const turnKey = hashText(signature);
  const seenTurn = countOf(state.turns, turnKey);
  const callKeys = calls.map((c) => callKey(c.name, c.arguments));
  const repeated = calls.find((_, i) => countOf(state.calls, callKeys[i] ?? '') >= config.repeatedCallThreshold);
  const hint =
    seenTurn >= config.duplicateThreshold
      ? stuckHint(`the same reply ${seenTurn + 1} times`)
      : repeated
        ? stuckHint(`the same ${repeated.name} call with the same arguments again`)
        : undefined;
  const turns = remember(state.turns, [turnKey]);
  const recentCalls = remember(state.calls, callKeys);
  return hint ? { turns, calls: recentCalls, hint } : { turns, calls: recentCalls };
}
