import type { AssistantMessage } from './messages.js';

const FNV_OFFSET = 0x811c9dc5;

/** FNV-1a, 32 bit, over `text` after the characters already in `hash`. */
function fnv(hash: number, text: string): number {
  let next = hash;
  for (let i = 0; i < text.length; i++) {
    next ^= text.charCodeAt(i);
    next = Math.imul(next, 0x01000193);
  }
  return next;
}

const keyOf = (hash: number) => (hash >>> 0).toString(36);

/** FNV-1a, 32 bit: a short deterministic key for a turn or a call. */
export const hashText = (text: string): string => keyOf(fnv(FNV_OFFSET, text));

const callKey = (name: string, args: string) => keyOf(fnv(fnv(fnv(FNV_OFFSET, name), '\u0000'), args.trim()));

/** The key of a whole turn: its text, then each call as `name(arguments)`, NUL between them (no joined copy is made). */
function turnKey(text: string, calls: readonly { readonly name: string; readonly arguments: string }[]): string {
  let hash = fnv(FNV_OFFSET, text);
  for (const call of calls) hash = fnv(fnv(fnv(fnv(fnv(hash, '\u0000'), call.name), '('), call.arguments.trim()), ')');
  return keyOf(hash);
}

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
  /** The task the hint belongs to (`state.taskIndex`): a new task starts without it. */
  readonly task?: number;
}

/** When the agent counts as stuck: how often the same thing was seen before, among the recent turns. */
export interface StuckThresholds {
  /** Earlier identical assistant turns (text and calls) that make it stuck (OpenManus's `duplicate_threshold`). */
  readonly duplicates: number;
  /** Earlier identical tool calls (same name and arguments) that make it stuck. */
  readonly repeats: number;
}

/** How far back repeats are looked for: a bounded window keeps each step O(1) however long the run. */
export const STUCK_WINDOW = 32;

const remember = (recent: readonly string[], keys: readonly string[]) => {
  const next = recent.concat(keys);
  return next.length > STUCK_WINDOW ? next.slice(next.length - STUCK_WINDOW) : next;
};

function countOf(recent: readonly string[], key: string): number {
  let count = 0;
  for (const seen of recent) if (seen === key) count++;
  return count;
}

/**
 * Records an assistant turn and says whether the agent looks stuck: among the recent turns,
 * the same whole turn (text and calls) `duplicates` times before, or the same call (name and
 * arguments) `repeats` times before. The hint is for the next request only.
 */
export function recordTurn(
  thresholds: StuckThresholds,
  memory: StuckMemory | undefined,
  message: AssistantMessage,
): StuckMemory {
  const state = memory ?? { turns: [], calls: [] };
  const calls = message.toolCalls ?? [];
  const text = message.content.trim();
  if (text === '' && calls.length === 0) return { turns: state.turns, calls: state.calls };
  const key = turnKey(text, calls);
  const seenTurn = countOf(state.turns, key);
  const callKeys = calls.map((c) => callKey(c.name, c.arguments));
  const repeated = calls.find((_, i) => countOf(state.calls, callKeys[i] ?? '') >= thresholds.repeats);
  const hint =
    seenTurn >= thresholds.duplicates
      ? stuckHint(`the same reply ${seenTurn + 1} times`)
      : repeated
        ? stuckHint(`the same ${repeated.name} call with the same arguments again`)
        : undefined;
  const turns = remember(state.turns, [key]);
  const recentCalls = remember(state.calls, callKeys);
  return hint ? { turns, calls: recentCalls, hint } : { turns, calls: recentCalls };
}
