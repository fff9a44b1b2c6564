/**
 * What the history a request carries leaves out — and when that changes. A provider's prompt cache
 * serves the part of a request that repeats the start of an earlier one, so between two changes
 * the history only grows at its end: nothing already sent is rewritten. When it must shrink (past
 * `maxMessages` or `maxTokens`, more full observations or images than kept) it shrinks in one jump
 * from the limit down to a share of it (`memory.shrinkTo`), all pending shrinking at once, so the
 * cache breaks once per many steps rather than at every step.
 */
import type { AgentConfig } from './agent.js';
import { countingTokenizer, summaryMessage, withHistoryTokens } from './compaction.js';
import { keepNewestImages, shrinkSupersededObservations, type TokenBudget, windowStart } from './memory.js';
import { type Message, userMessage } from './messages.js';
import type { AgentState } from './state.js';
import { messageTokens } from './tokens.js';

/** Where the history sent starts once older messages were left out (kept in the state: it moves only in jumps). */
export interface HistoryWindow {
  /** Index in `messages` of the first message sent after the task (and the summary); earlier ones are left out. */
  readonly start: number;
  /** The note sent in their place: how many were left out, and the calls that would fetch their results again. */
  readonly leftOut: string;
}

/** What one jump did, to the messages a request had already carried. */
export interface HistoryShrunk {
  /** Messages newly left out of requests. */
  readonly dropped: number;
  /** Messages already sent that were rewritten: observations cut to their brief, images taken out. */
  readonly shrunk: number;
}

/** The share of each limit the history is cut to when it passes it (`memory.shrinkTo`, default a half). */
export const DEFAULT_SHRINK_TO = 0.5;

/** Full observations (or images) a history may hold before they shrink to `keep`: twice as many, none when none are kept. */
const highWater = (keep: number) => keep * 2;

/** Where what the model has not seen yet begins: its newest reply (and that reply's results), or a new task. */
function newestUnsent(messages: readonly Message[]): number {
  let i = messages.length - 1;
  while (i > 0 && messages[i]?.role === 'tool') i--;
  return Math.max(0, i);
}

/** Whether some tool has more full observations (ones with a brief) in `messages[from…]` than `high`. */
function observationsPast(messages: readonly Message[], from: number, high: number): boolean {
  const seen = new Map<string, number>();
  for (let i = messages.length - 1; i >= from; i--) {
    const message = messages[i];
    if (message?.role !== 'tool' || message.brief === undefined) continue;
    const count = (seen.get(message.name) ?? 0) + 1;
    if (count > high) return true;
    seen.set(message.name, count);
  }
  return false;
}

function imagesPast(messages: readonly Message[], from: number, high: number): boolean {
  let count = 0;
  for (let i = messages.length - 1; i >= from; i--) {
    const message = messages[i];
    if (message && 'image' in message && message.image && ++count > high) return true;
  }
  return false;
}

/** Argument names whose values let the model fetch a left-out result again: a page's URL, a file's path, a query. */
const RESTORING_ARGS = ['action', 'command', 'url', 'path', 'file', 'file_path', 'filename', 'query'];
const RESTORING_VALUE_CHARS = 200;
/** Newest left-out calls the note lists. */
const NOTE_CALLS = 30;

function restoringCall(name: string, json: string): string | undefined {
  let args: unknown;
  try {
    args = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (typeof args !== 'object' || args === null) return undefined;
  const parts: string[] = [];
  let restores = false;
  for (const key of RESTORING_ARGS) {
    const value = (args as Record<string, unknown>)[key];
    if (typeof value !== 'string' || value === '') continue;
    if (key !== 'action' && key !== 'command') restores = true;
    const clipped = value.length > RESTORING_VALUE_CHARS ? `${value.slice(0, RESTORING_VALUE_CHARS)}…` : value;
    parts.push(`${key}=${JSON.stringify(clipped)}`);
  }
  return restores ? `${name} ${parts.join(' ')}` : undefined;
}

/** The note that stands for `messages[from, to)` (the task aside). */
function leftOutNote(messages: readonly Message[], from: number, to: number, taskIndex: number): string {
  const calls: string[] = [];
  for (let i = to - 1; i >= from && calls.length < NOTE_CALLS; i--) {
    const message = messages[i];
    if (message?.role !== 'assistant') continue;
    const made = message.toolCalls ?? [];
    for (let c = made.length - 1; c >= 0 && calls.length < NOTE_CALLS; c--) {
      const call = made[c];
      const line = call && restoringCall(call.name, call.arguments);
      if (line && !calls.includes(line)) calls.push(line);
    }
  }
  const count = to - from - (taskIndex >= from && taskIndex < to ? 1 : 0);
  const head = `[${count} earlier message${count === 1 ? ' is' : 's are'} left out of this request to keep it short.`;
  if (calls.length === 0) return `${head}]`;
  return `${head} To see again what one returned, repeat its call; the newest of them were:\n${calls
    .reverse()
    .map((line) => `- ${line}`)
    .join('\n')}]`;
}

/** Where the sent history starts: the window's start, or — past it — the summary's cut. */
export const sentFrom = (state: AgentState): number => Math.max(state.window?.start ?? 0, state.summary?.upTo ?? 0);

function tokenBudget(config: AgentConfig, maxTokens: number): TokenBudget {
  const tokenizer = countingTokenizer(config);
  return { maxTokens, count: (message) => messageTokens(message, tokenizer) };
}

/** Whether the history sent from `from` (the task with it) is over `maxMessages` or `maxTokens`. */
function windowOver(config: AgentConfig, state: AgentState, from: number): boolean {
  const { messages, taskIndex } = state;
  const { maxMessages, maxTokens } = config.memory;
  const withTask = taskIndex < from ? 1 : 0;
  if (messages.length - from + withTask > maxMessages) return true;
  if (maxTokens === undefined) return false;
  const { count } = tokenBudget(config, maxTokens);
  let tokens = withTask && messages[taskIndex] ? count(messages[taskIndex] as Message) : 0;
  for (let i = from; i < messages.length && tokens <= maxTokens; i++) tokens += count(messages[i] as Message);
  return tokens > maxTokens;
}

/**
 * The state with its history shrunk if a limit is passed, and what the jump did to messages that
 * were already sent (nothing when only messages no request carried yet were shrunk). The same state
 * when nothing is due, so requests until the next jump extend the last one.
 */
export function shrinkHistory(
  config: AgentConfig,
  state: AgentState,
): { readonly state: AgentState; readonly shrunk?: HistoryShrunk } {
  const { messages } = state;
  const from = sentFrom(state);
  const { keepFullObservations: keepFull, keepImages } = config;
  const observationsDue = observationsPast(messages, from, highWater(keepFull));
  const imagesDue = imagesPast(messages, from, highWater(keepImages));
  const windowDue = windowOver(config, state, from);
  if (!observationsDue && !imagesDue && !windowDue) return { state };

  let shrunkMessages = messages;
  if (observationsDue || imagesDue) {
    // Everything pending goes in the same jump: observations and images alike.
    shrunkMessages = shrinkSupersededObservations(shrunkMessages, keepFull, from);
    shrunkMessages = keepNewestImages(shrunkMessages, keepImages, from);
  }
  const unsent = newestUnsent(messages);
  let shrunk = 0;
  for (let i = from; i < unsent; i++) if (shrunkMessages[i] !== messages[i]) shrunk++;

  let window = state.window;
  let dropped = 0;
  if (windowDue) {
    const share = config.memory.shrinkTo ?? DEFAULT_SHRINK_TO;
    const { maxMessages, maxTokens } = config.memory;
    const low = Math.max(1, Math.floor(maxMessages * share));
    const budget = maxTokens === undefined ? undefined : tokenBudget(config, Math.floor(maxTokens * share));
    const start = windowStart(shrunkMessages, from, state.taskIndex, low, budget);
    if (start > from) {
      const base = state.summary?.upTo ?? 0;
      dropped = start - from - (state.taskIndex >= from && state.taskIndex < start ? 1 : 0);
      window = { start, leftOut: leftOutNote(shrunkMessages, base, start, state.taskIndex) };
    }
  }
  // The newest turn alone can be over a limit: then nothing moves, and the state stays the same.
  if (shrunkMessages === messages && window === state.window) return { state };
  const moved = { ...state, messages: shrunkMessages, ...(window ? { window } : {}) };
  const next = withHistoryTokens(config, state, moved, shrunkMessages !== messages);
  return dropped > 0 || shrunk > 0 ? { state: next, shrunk: { dropped, shrunk } } : { state: next };
}

// One message per window, kept while the window is: its tokens and wire form are worked out once.
const noteMessages = new WeakMap<HistoryWindow, Message>();
function noteMessage(window: HistoryWindow): Message {
  let message = noteMessages.get(window);
  if (!message) {
    message = userMessage(window.leftOut);
    noteMessages.set(window, message);
  }
  return message;
}

/**
 * The history a request carries: the task (when it is older than what is sent), the summary of the
 * summarised part, the note for what the window leaves out, then every message since — all of it the
 * same from one request to the next until the next jump.
 */
export function sentHistory(state: AgentState): readonly Message[] {
  const from = sentFrom(state);
  if (from === 0) return state.messages;
  const head: Message[] = [];
  const task = state.messages[state.taskIndex];
  if (task && state.taskIndex < from) head.push(task);
  if (state.summary) head.push(summaryMessage(state.summary));
  const window = state.window;
  if (window && window.start > (state.summary?.upTo ?? 0)) head.push(noteMessage(window));
  // concat copies the (long) history in one go; spreading it element by element costs more per step.
  return head.concat(state.messages.slice(from));
}
