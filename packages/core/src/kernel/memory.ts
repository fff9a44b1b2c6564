import type { Message } from './messages.js';

export interface MemoryWindow {
  readonly messages: readonly Message[];
  /** Messages of the history not sent this time. */
  readonly dropped: number;
}

/** A limit on the tokens of the window, with the (memoised) count of one message. */
export interface TokenBudget {
  readonly maxTokens: number;
  readonly count: (message: Message) => number;
}

/**
 * Where the newest whole turns of `messages[from…]` that fit start (an assistant message with tool
 * calls travels with all its tool results): at most `maxMessages` — and at most `budget.maxTokens`
 * — with the task counted, and the newest turn always, whatever its size. Never on a tool result.
 * Work is proportional to the window, not the history.
 */
export function windowStart(
  messages: readonly Message[],
  from: number,
  taskIndex: number,
  maxMessages: number,
  budget?: TokenBudget,
): number {
  const task = messages[taskIndex];
  const taskTokens = budget && task ? budget.count(task) : 0;
  let tokens = 0;
  let start = messages.length;
  while (start > from) {
    let unitStart = start - 1;
    let unitTokens = budget ? budget.count(messages[unitStart] as Message) : 0;
    while (unitStart > from && messages[unitStart]?.role === 'tool') {
      unitStart--;
      if (budget) unitTokens += budget.count(messages[unitStart] as Message);
    }
    const keepsTask = unitStart <= taskIndex;
    const size = messages.length - unitStart + (keepsTask ? 0 : 1);
    const total = tokens + unitTokens + (keepsTask ? 0 : taskTokens);
    // The newest turn always goes, whatever its size: a request needs it.
    const over = size > maxMessages || (budget !== undefined && total > budget.maxTokens);
    if (over && start !== messages.length) break;
    start = unitStart;
    tokens += unitTokens;
  }
  // A window that starts with tool results would be rejected by the API: skip to a clean start.
  while (start < messages.length && messages[start]?.role === 'tool') start++;
  return start;
}

/**
 * Picks the history sent with a request: whole turns from the end, at most `maxMessages` — and at
 * most `budget.maxTokens` — when turns allow, and the task message always included.
 */
export function selectWindow(
  messages: readonly Message[],
  taskIndex: number,
  maxMessages: number,
  budget?: TokenBudget,
): MemoryWindow {
  if (messages.length <= maxMessages && !budget) return { messages, dropped: 0 };
  const start = windowStart(messages, 0, taskIndex, maxMessages, budget);
  const task = messages[taskIndex];
  const tail = start === 0 ? messages : messages.slice(start);
  if (start <= taskIndex) return { messages: tail, dropped: start };
  return task ? { messages: [task, ...tail], dropped: start - 1 } : { messages: tail, dropped: start };
}

/**
 * Keeps the newest `keep` observations of each tool that have a brief in full; older ones (from
 * `from` on) become their brief. Returns the same array when nothing changes.
 */
export function shrinkSupersededObservations(messages: readonly Message[], keep: number, from = 0): readonly Message[] {
  const seen = new Map<string, number>();
  let out: Message[] | undefined;
  for (let i = messages.length - 1; i >= from; i--) {
    const message = messages[i];
    if (message?.role !== 'tool' || message.brief === undefined) continue;
    const count = (seen.get(message.name) ?? 0) + 1;
    seen.set(message.name, count);
    if (count <= keep) continue;
    out ??= [...messages];
    const { brief, ...rest } = message;
    out[i] = { ...rest, content: brief };
  }
  return out ?? messages;
}

/**
 * Keeps images on only the newest `keep` messages that carry one (screenshots are the costliest
 * part of a history and an old page is stale), looking from `from` on. Returns the same array when
 * nothing changes.
 */
export function keepNewestImages(messages: readonly Message[], keep: number, from = 0): readonly Message[] {
  let seen = 0;
  let out: Message[] | undefined;
  for (let i = messages.length - 1; i >= from; i--) {
    const message = messages[i];
    if (!message || !('image' in message) || !message.image) continue;
    if (++seen <= keep) continue;
    out ??= [...messages];
    const { image: _dropped, ...rest } = message;
    out[i] = rest;
  }
  return out ?? messages;
}
