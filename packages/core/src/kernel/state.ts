import type { ContextState } from './context.js';
import type { Message, ToolCall } from './messages.js';

export const SCHEMA_VERSION = 1;

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

export interface Usage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly llmCalls: number;
}

/** Where one tool call of the current turn stands. */
export type CallPhase = 'approval' | 'human' | 'running' | 'done';

export interface PendingCall {
  readonly call: ToolCall;
  readonly phase: CallPhase;
  /** Parsed arguments (the reducer parsed the JSON once). */
  readonly args: unknown;
  /** Set once the call has answered. */
  readonly output?: string;
  readonly isError?: boolean;
  readonly image?: { readonly base64: string; readonly mimeType: string };
}

/** The turn being acted on: the tool calls of the last assistant message, in order. */
export interface Turn {
  readonly calls: readonly PendingCall[];
}

export interface StuckState {
  /** Hashes of the most recent assistant turns (text and calls), oldest first. */
  readonly turns: readonly string[];
  /** Hashes of the most recent tool calls (name and arguments), oldest first. */
  readonly calls: readonly string[];
  /** The hint to send with the next request, if the last step looked stuck. */
  readonly hint?: string;
}

/** Everything about a run, as JSON-serialisable data. */
export interface AgentState {
  readonly schemaVersion: typeof SCHEMA_VERSION;
  readonly status: RunStatus;
  /** Steps taken in the current run (reset by each `started`). */
  readonly step: number;
  /** Counts model requests; effect ids derive from it. */
  readonly requestSeq: number;
  readonly messages: readonly Message[];
  /** Index in `messages` of the current task (always sent, never cut). */
  readonly taskIndex: number;
  readonly turn?: Turn;
  /** Context gathered (or being gathered) for the current step's request. */
  readonly context?: ContextState;
  readonly usage: Usage;
  readonly stuck: StuckState;
  /** A `required` turn without a tool call was re-prompted once. */
  readonly reprompted: boolean;
  readonly finishReason?: FinishReason;
  readonly answer?: string;
  readonly error?: string;
}

export const emptyUsage: Usage = {
  inputTokens: 0,
  outputTokens: 0,
  llmCalls: 0,
};

export const isFinal = (state: AgentState): boolean => state.status === 'finished' || state.status === 'failed';

const STATUSES: readonly RunStatus[] = [
  'idle',
  'awaiting_context',
  'awaiting_llm',
  'awaiting_tools',
  'awaiting_human',
  'awaiting_approval',
  'finished',
  'failed',
];

/**
 * Checks a saved state (parsed JSON) before it is resumed. States of every released schema
 * version load here; a newer or damaged one is refused with the reason.
 */
export function restoreState(saved: unknown): { ok: true; state: AgentState } | { ok: false; error: string } {
  if (typeof saved !== 'object' || saved === null) return { ok: false, error: 'a saved state must be a JSON object' };
  const value = saved as Partial<AgentState>;
  if (value.schemaVersion !== SCHEMA_VERSION) {
    return {
      ok: false,
      error: `unsupported state schemaVersion ${String(value.schemaVersion)} (this version reads ${SCHEMA_VERSION})`,
    };
  }
  if (!STATUSES.includes(value.status as RunStatus))
    return { ok: false, error: `unknown status ${String(value.status)}` };
  if (!Array.isArray(value.messages)) return { ok: false, error: 'messages must be an array' };
  if (typeof value.step !== 'number' || typeof value.requestSeq !== 'number')
    return { ok: false, error: 'step and requestSeq must be numbers' };
  return { ok: true, state: value as AgentState };
}
