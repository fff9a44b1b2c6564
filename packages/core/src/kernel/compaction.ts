/**
 * Context compaction: once the history a request would carry passes a token threshold, the
 * older turns are summarised by the model (a `callLlm` effect of its own) and requests carry the
 * summary instead of them. The transcript in the state stays whole; only what is sent shrinks.
 */
import type { AgentConfig, TokenizerName } from './agent.js';
import type { LlmRequest } from './effects.js';
import { type Message, userMessage } from './messages.js';
import type { AgentState } from './state.js';
import { messageTokens, tokenizerReady } from './tokens.js';

/** When and how to summarise old turns. */
export interface SummarizePolicy {
  /** Summarise once the history a request carries (system prompt aside) passes this many tokens. */
  readonly atTokens: number;
  /** The newest turns always sent in full (default 4): a turn is a reply with its tool results. */
  readonly keepTurns?: number;
  /** The LLM profile that writes summaries (default: the agent's). */
  readonly profile?: string;
}

/** What the summary stands for: every message before `upTo` except the current task. */
export interface HistorySummary {
  readonly text: string;
  readonly upTo: number;
}

/** The tokenizer to count with now: the configured one once loaded, an estimate until then. */
export const countingTokenizer = (config: AgentConfig): TokenizerName =>
  tokenizerReady(config.tokenizer) ? config.tokenizer : 'estimate';

// One message per summary, kept while the summary is: its token count and its wire form are then
// worked out once, not on every step that sends it.
const summaryMessages = new WeakMap<HistorySummary, Message>();
export function summaryMessage(summary: HistorySummary): Message {
  let message = summaryMessages.get(summary);
  if (!message) {
    message = userMessage(
      `A summary of the earlier part of this conversation (its messages are not repeated):\n\n${summary.text}`,
    );
    summaryMessages.set(summary, message);
  }
  return message;
}

/** Where the newest `keep` turns start (never on a tool result, which must follow its call). */
function keptTurnsStart(messages: readonly Message[], keep: number): number {
  let start = messages.length;
  for (let turns = 0; turns < keep && start > 0; turns++) {
    start--;
    while (start > 0 && messages[start]?.role === 'tool') start--;
  }
  return start;
}

/**
 * The tokens of the messages not summarised, `messages[from, to)`, counted with `tokenizer`: kept
 * in the state by the reducer as messages are added, replaced or summarised, so that the check for
 * a due summary costs the step's new messages, not the whole history.
 */
export interface HistoryTokens {
  readonly tokenizer: TokenizerName;
  readonly from: number;
  readonly to: number;
  readonly tokens: number;
}

/** Whether `state`'s count is of its unsummarised messages as they are, by `tokenizer`. */
const countHolds = (
  state: AgentState,
  tokenizer: TokenizerName,
): state is AgentState & { historyTokens: HistoryTokens } =>
  state.historyTokens?.tokenizer === tokenizer &&
  state.historyTokens.from === (state.summary?.upTo ?? 0) &&
  state.historyTokens.to === state.messages.length;

function countFrom(messages: readonly Message[], from: number, tokenizer: TokenizerName): number {
  let tokens = 0;
  for (let i = from; i < messages.length; i++) tokens += messageTokens(messages[i] as Message, tokenizer);
  return tokens;
}

/**
 * `next` (a state `before` led to) with its count of unsummarised tokens brought up to date from
 * `before`'s: the messages summarised since taken out, those appended added and — when `replaced`
 * says some may have been replaced in place (images dropped, observations cut to their brief) —
 * each replaced one counted again. Without a count that holds for `before` (a state saved before
 * counts were kept, another tokenizer, messages changed outside the reducer) it counts afresh.
 * Kept only while the agent summarises; otherwise the state carries none.
 */
export function withHistoryTokens(
  config: AgentConfig,
  before: AgentState,
  next: AgentState,
  replaced = false,
): AgentState {
  if (!config.memory.summarize) {
    if (!next.historyTokens) return next;
    const { historyTokens: _unkept, ...rest } = next;
    return rest;
  }
  const tokenizer = countingTokenizer(config);
  const count = (message: Message | undefined) => (message ? messageTokens(message, tokenizer) : 0);
  const from = next.summary?.upTo ?? 0;
  const to = next.messages.length;
  let tokens: number;
  if (countHolds(before, tokenizer) && from >= before.historyTokens.from && to >= before.historyTokens.to) {
    const known = before.historyTokens;
    tokens = known.tokens;
    for (let i = known.from; i < from; i++) tokens -= count(before.messages[i]);
    if (replaced) {
      for (let i = from; i < known.to; i++)
        if (next.messages[i] !== before.messages[i]) tokens += count(next.messages[i]) - count(before.messages[i]);
    }
    for (let i = Math.max(known.to, from); i < to; i++) tokens += count(next.messages[i]);
  } else {
    tokens = countFrom(next.messages, from, tokenizer);
  }
  return { ...next, historyTokens: { tokenizer, from, to, tokens } };
}

/** Tokens of the history a request carries (`historyToSend`), from the state's count where it holds. */
export function tokensToSend(config: AgentConfig, state: AgentState): number {
  const tokenizer = countingTokenizer(config);
  const { summary } = state;
  const from = summary?.upTo ?? 0;
  const unsummarised = countHolds(state, tokenizer)
    ? state.historyTokens.tokens
    : countFrom(state.messages, from, tokenizer);
  if (!summary) return unsummarised;
  // The summary stands in for what it covers; the task is sent as it is, before it when summarised over.
  const task = state.taskIndex < from ? state.messages[state.taskIndex] : undefined;
  return unsummarised + messageTokens(summaryMessage(summary), tokenizer) + (task ? messageTokens(task, tokenizer) : 0);
}

/**
 * The cut a summary should reach now, or nothing: the history is under the threshold, or no
 * whole turn older than the kept ones is left to summarise.
 */
export function dueCompaction(config: AgentConfig, state: AgentState): { readonly upTo: number } | undefined {
  const policy = config.memory.summarize;
  if (!policy) return undefined;
  if (tokensToSend(config, state) <= policy.atTokens) return undefined;
  const upTo = keptTurnsStart(state.messages, policy.keepTurns ?? 4);
  const from = state.summary?.upTo ?? 0;
  // Something besides the task must be left to summarise.
  const fresh = upTo - from - (state.taskIndex >= from && state.taskIndex < upTo ? 1 : 0);
  return fresh > 0 ? { upTo } : undefined;
}

const SUMMARISER =
  'You summarise the work of an AI agent so that it can go on without its full history. Keep what it ' +
  'still needs: the facts found (with their sources), files written and where, decisions taken, what ' +
  'failed and why, and what is left to do. Be brief and concrete; leave out pleasantries.';

/** Longest piece of one message the summariser reads: a page state need not be read whole to be summed up. */
const PIECE_CHARS = 4000;
const piece = (text: string) => (text.length > PIECE_CHARS ? `${text.slice(0, PIECE_CHARS)} […]` : text);

function transcript(messages: readonly Message[]): string {
  return messages
    .map((message) => {
      switch (message.role) {
        case 'assistant': {
          const calls = (message.toolCalls ?? []).map((call) => `\n  → ${call.name}(${piece(call.arguments)})`);
          return `assistant: ${piece(message.content)}${calls.join('')}`;
        }
        case 'tool':
          return `${message.name} returned: ${piece(message.content)}`;
        default:
          return `${message.role}: ${piece(message.content)}`;
      }
    })
    .join('\n');
}

/** The request that summarises the messages before `upTo` (with the previous summary, if any). */
export function compactionRequest(config: AgentConfig, state: AgentState, upTo: number): LlmRequest {
  const from = state.summary?.upTo ?? 0;
  const older = state.messages.slice(from, upTo).filter((_, i) => from + i !== state.taskIndex);
  const task = state.messages[state.taskIndex];
  const parts = [
    ...(task && task.role === 'user' ? [`The agent's task: ${task.content}`] : []),
    ...(state.summary ? [`The summary so far:\n${state.summary.text}`] : []),
    `What happened ${state.summary ? 'since' : 'so far'}:\n${transcript(older)}`,
    'Write the new summary, covering everything above.',
  ];
  const profile = config.memory.summarize?.profile ?? config.llmProfile;
  return {
    messages: [
      { role: 'system', content: SUMMARISER },
      { role: 'user', content: parts.join('\n\n') },
    ],
    tools: [],
    toolChoice: 'none',
    ...(profile ? { profile } : {}),
  };
}
