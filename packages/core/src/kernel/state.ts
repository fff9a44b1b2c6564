import type { HistorySummary, HistoryTokens } from './compaction.js';
import type { ContextState } from './context.js';
import type { HostAnswer } from './events.js';
import type { HistoryWindow } from './historyWindow.js';
import type { ImageData, Message, ToolCall } from './messages.js';
import type { RunError } from './runError.js';
import type { JsonSchema, ToolSpec } from './tool.js';

/** Version of the saved-state format; older ones load through `migrations.ts`. */
export const SCHEMA_VERSION = 3;

export type RunStatus =
  | 'idle'
  | 'awaiting_context'
  | 'awaiting_llm'
  | 'awaiting_tools'
  | 'awaiting_human'
  | 'awaiting_approval'
  | 'finished'
  | 'failed';

export type FinishReason = 'answered' | 'terminated' | 'max_steps' | 'token_limit' | 'cancelled' | 'error';

/**
 * What model calls used, as providers report it. The cache and reasoning counts are parts of
 * `inputTokens` and `outputTokens`, not additions to them; each is absent until a call reports it.
 */
export interface Usage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly llmCalls: number;
  /** Input tokens served from the provider's prompt cache (billed at the cached-input price). */
  readonly cachedInputTokens?: number;
  /** Input tokens written to the prompt cache, where a provider bills the write (Anthropic's cache creation). */
  readonly cacheWriteTokens?: number;
  /** Output tokens the model spent reasoning before it answered. */
  readonly reasoningTokens?: number;
  /**
   * What the calls cost in USD; `null` once any call's price was unknown (never a guess). Absent when
   * no call was priced: then the cost is unknown if there were calls (`costOf` reads it either way).
   */
  readonly costUsd?: number | null;
}

/** Where one tool call of the current turn stands. */
export type CallPhase = 'approval' | 'human' | 'running' | 'done';

/**
 * A form a person is asked to fill in (an MCP server's elicitation): its message and the JSON Schema
 * of its fields, for a page that renders it; the question's text says the same for one that does not.
 */
export interface ElicitationForm {
  readonly message: string;
  readonly schema: JsonSchema;
}

/** Something a paused run waits for from a person; answer it with an event carrying `effectId`. */
export type PendingInput =
  | {
      readonly kind: 'human';
      readonly effectId: string;
      readonly question: string;
      readonly call: ToolCall;
      /** Set when the question is a form: the answer is then its fields as JSON (see the question). */
      readonly form?: ElicitationForm;
    }
  | { readonly kind: 'approval'; readonly effectId: string; readonly call: ToolCall; readonly args: unknown };

export interface PendingCall {
  readonly call: ToolCall;
  readonly phase: CallPhase;
  /** Parsed arguments (the reducer parsed the JSON once). */
  readonly args: unknown;
  /** Set once the call has answered. */
  readonly output?: string;
  readonly isError?: boolean;
  readonly image?: ImageData;
  readonly brief?: string;
  /** The shell recorded that an at-most-once tool began this call (a resume must not run it again). */
  readonly started?: boolean;
  /** What a long-running tool recorded so far (a child agent's state): a resumed call continues from it. */
  readonly progress?: unknown;
  /** The tool is paused on a person (a child agent's approval or question), ids relative to this call. */
  readonly waiting?: readonly PendingInput[];
  /**
   * The person's answer to what the tool paused on, ids relative to this call: kept until the call
   * answers, so a run resumed from this state (not only the one that took the answer) hands it over.
   */
  readonly answer?: HostAnswer;
}

/** The turn being acted on: the tool calls of the last assistant message, in order. */
export interface Turn {
  readonly calls: readonly PendingCall[];
}

/** Everything about a run, as JSON-serialisable data. */
export interface AgentState {
  readonly schemaVersion: typeof SCHEMA_VERSION;
  /** Given by the host or made by the shell when the run started; tools key their resources on it. */
  readonly runId?: string;
  readonly status: RunStatus;
  /** Steps taken in the current task (reset by each `started`). */
  readonly step: number;
  /** Counts model requests; effect ids derive from it. */
  readonly requestSeq: number;
  readonly messages: readonly Message[];
  /** Index in `messages` of the current task (always sent, never cut). */
  readonly taskIndex: number;
  readonly turn?: Turn;
  /** Context gathered (or being gathered) for the current step's request. */
  readonly context?: ContextState;
  /** The tools the model sees, once they have changed during the run; until then the config's. */
  readonly tools?: readonly ToolSpec[];
  /** Tools still listed (so the list the model sees keeps its order) whose implementation went away. */
  readonly unavailableTools?: readonly string[];
  /** Per-run data tools keep between calls (the editor's undo history), by tool name. */
  readonly toolData?: Readonly<Record<string, unknown>>;
  /** What requests carry instead of the older messages, once the history was summarised. */
  readonly summary?: HistorySummary;
  /** Where the history sent starts once older messages were left out; it moves only in jumps. */
  readonly window?: HistoryWindow;
  /** A summary of the messages before `upTo` is being written (the model request waits for it). */
  readonly compacting?: { readonly upTo: number };
  /** The tokens of the messages not summarised, kept while the agent summarises (states saved without it count on first use). */
  readonly historyTokens?: HistoryTokens;
  /** What each policy remembers between steps (stuck detection's recent turns), by policy name. */
  readonly policies: Readonly<Record<string, unknown>>;
  readonly usage: Usage;
  /** A `required` turn without a tool call was re-prompted once. */
  readonly reprompted: boolean;
  readonly finishReason?: FinishReason;
  readonly answer?: string;
  /** Why the run failed or stopped early (not for an answer or a terminate). */
  readonly error?: RunError;
}

export const emptyUsage: Usage = {
  inputTokens: 0,
  outputTokens: 0,
  llmCalls: 0,
};

export const isFinal = (state: AgentState): boolean => state.status === 'finished' || state.status === 'failed';

/** The cost of `usage` in USD, or `null` when it is unknown (a call made without a price). */
export const costOf = (usage: Usage): number | null =>
  usage.costUsd !== undefined ? usage.costUsd : usage.llmCalls === 0 ? 0 : null;

type Counted = 'cachedInputTokens' | 'cacheWriteTokens' | 'reasoningTokens';
const COUNTED: readonly Counted[] = ['cachedInputTokens', 'cacheWriteTokens', 'reasoningTokens'];

type Optional = { -readonly [K in Counted | 'costUsd']?: Usage[K] };

/**
 * The optional fields that `a` or `b` carries, each made by `combine`: a field neither reports stays
 * absent, so usage from ports that report no cache or price looks as it always did.
 */
function optionalFields(
  a: Usage,
  b: Usage,
  combine: (x: number, y: number) => number,
  combineCost: (x: number | null, y: number | null) => number | null,
): Optional {
  const fields: Optional = {};
  for (const key of COUNTED) {
    if (a[key] !== undefined || b[key] !== undefined) fields[key] = combine(a[key] ?? 0, b[key] ?? 0);
  }
  if (a.costUsd !== undefined || b.costUsd !== undefined) fields.costUsd = combineCost(costOf(a), costOf(b));
  return fields;
}

export function addUsage(usage: Usage, more: Usage): Usage {
  return {
    inputTokens: usage.inputTokens + more.inputTokens,
    outputTokens: usage.outputTokens + more.outputTokens,
    llmCalls: usage.llmCalls + more.llmCalls,
    ...optionalFields(usage, more, (x, y) => x + y, addCost),
  };
}

/** What was used since `before` (a state's usage counts every task it ran; one run's share is the difference). */
export function usageSince(now: Usage, before: Usage): Usage {
  return {
    inputTokens: Math.max(0, now.inputTokens - before.inputTokens),
    outputTokens: Math.max(0, now.outputTokens - before.outputTokens),
    llmCalls: Math.max(0, now.llmCalls - before.llmCalls),
    ...optionalFields(now, before, (x, y) => Math.max(0, x - y), costSince),
  };
}

// Sums of floats drift (0.1 + 0.2); cost is kept to a billionth of a dollar, far below any price's step.
const roundCost = (usd: number): number => Math.round(usd * 1e9) / 1e9;

const addCost = (a: number | null, b: number | null): number | null =>
  a === null || b === null ? null : roundCost(a + b);

/** An unknown cost before stays unknown: the run's share of it cannot be told apart. */
const costSince = (now: number | null, before: number | null): number | null =>
  now === null || before === null ? null : roundCost(Math.max(0, now - before));
