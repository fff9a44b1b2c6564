import type { AgentEvent, AgentState, Message, ToolSpec } from '@openmanus/core';
import { applyDelta } from '@openmanus/core/internal';
import type { JournalEntry } from './journal.js';

type Transition = Extract<JournalEntry, { kind: 'event' }>;

export const transitionsOf = (entries: readonly JournalEntry[]): Transition[] =>
  entries.filter((entry): entry is Transition => entry.kind === 'event');

/**
 * The state after each transition, from the nearest whole state before it through the deltas
 * after it (each state a copy the caller owns). `visit` gets them in order; return false to stop.
 */
export function walkStates(
  entries: readonly JournalEntry[],
  visit: (n: number, state: AgentState, event: AgentEvent) => boolean | undefined,
): void {
  let state: Record<string, unknown> | undefined;
  for (const entry of transitionsOf(entries)) {
    if (entry.full || !state) state = {};
    applyDelta(state, structuredClone(entry.delta));
    if (visit(entry.n, structuredClone(state) as unknown as AgentState, entry.event) === false) return;
  }
}

/** The state after transition `n` (1 is the first), or undefined when the journal has no such transition. */
export function stateAt(entries: readonly JournalEntry[], n: number): AgentState | undefined {
  const transitions = transitionsOf(entries).filter((entry) => entry.n <= n);
  if (transitions.at(-1)?.n !== n) return undefined;
  // Only from the last whole state at or before `n`: earlier deltas are not needed.
  let from = transitions.length - 1;
  while (from > 0 && !transitions[from]?.full) from--;
  const state: Record<string, unknown> = {};
  for (const entry of transitions.slice(from)) applyDelta(state, structuredClone(entry.delta));
  return state as unknown as AgentState;
}

/** What a model call was sent: its messages and tools, decoded against the state of its transition. */
export function requestOf(
  entries: readonly JournalEntry[],
  effectId: string,
): { messages: Message[]; tools: readonly ToolSpec[]; toolChoice: unknown } | undefined {
  let tools: readonly ToolSpec[] = [];
  for (const entry of entries) {
    if (entry.kind !== 'effect' || !entry.request) continue;
    if (entry.request.tools) tools = entry.request.tools;
    if (entry.effectId !== effectId) continue;
    const state = stateAt(entries, entry.n);
    const messages: Message[] = [];
    for (const sent of entry.request.messages) {
      if ('message' in sent) messages.push(sent.message);
      else messages.push(...(state?.messages.slice(sent.from, sent.to) ?? []));
    }
    return { messages, tools, toolChoice: entry.request.toolChoice };
  }
  return undefined;
}

export interface Change {
  readonly path: string;
  readonly before?: unknown;
  readonly after?: unknown;
}

/** Most changes a diff lists: a diff of two far-apart states of a long run stays a readable size. */
const MAX_CHANGES = 500;

/** The differences between two JSON values, by path (`messages[4].content`), at most `MAX_CHANGES`. */
export function jsonDiff(before: unknown, after: unknown): { changes: Change[]; truncated: boolean } {
  const changes: Change[] = [];
  let truncated = false;
  const walk = (a: unknown, b: unknown, path: string) => {
    if (changes.length >= MAX_CHANGES) {
      truncated = true;
      return;
    }
    if (Object.is(a, b)) return;
    const bothArrays = Array.isArray(a) && Array.isArray(b);
    const bothObjects = isObject(a) && isObject(b) && !Array.isArray(a) && !Array.isArray(b);
    if (bothArrays) {
      for (let i = 0; i < Math.max(a.length, b.length); i++) {
        if (i >= a.length) changes.push({ path: `${path}[${i}]`, after: b[i] });
        else if (i >= b.length) changes.push({ path: `${path}[${i}]`, before: a[i] });
        else walk(a[i], b[i], `${path}[${i}]`);
      }
      return;
    }
    if (bothObjects) {
      const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
      for (const key of keys) {
        const at = path ? `${path}.${key}` : key;
        if (!(key in b)) changes.push({ path: at, before: a[key] });
        else if (!(key in a)) changes.push({ path: at, after: b[key] });
        else walk(a[key], b[key], at);
      }
      return;
    }
    changes.push({ path: path || '(whole)', before: a, after: b });
  };
  walk(before, after, '');
  return { changes: changes.slice(0, MAX_CHANGES), truncated };
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;
