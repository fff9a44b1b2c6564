import type { ImageData, ReasoningPart, ToolCall } from './messages.js';
import type { RunError } from './runError.js';
import type { PendingInput } from './state.js';
import type { ToolSpec } from './tool.js';
import type { ToolContent } from './toolContent.js';

/** What one model call used, as its port reports it (the fields mean what they mean in `Usage`). */
export interface LlmUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cachedInputTokens?: number;
  readonly cacheWriteTokens?: number;
  readonly reasoningTokens?: number;
  /** The call's cost in USD, `null` when its price is unknown; absent (a port that prices nothing) counts as unknown. */
  readonly costUsd?: number | null;
}

/** How a `callLlm` effect is answered, by any machine whose reducer asks for model calls (agent, flow). */
export type LlmCallAnswer =
  | {
      readonly type: 'llmResponded';
      readonly effectId: string;
      readonly content: string;
      readonly toolCalls: readonly ToolCall[];
      readonly usage?: LlmUsage;
      /** The model's reasoning as the provider returned it, kept with the reply (see `ReasoningPart`). */
      readonly reasoning?: readonly ReasoningPart[];
    }
  /** The call failed: `error.code` is the port's kind as a code (`LLM_RATE_LIMIT`), with its status and Retry-After. */
  | { readonly type: 'llmFailed'; readonly effectId: string; readonly error: RunError };

/**
 * Inputs to the reducer: what happened. An event that answers an effect names it by
 * `effectId`; an answer to an effect the state is not waiting for changes nothing.
 */
export type AgentEvent =
  | { readonly type: 'started'; readonly input: string; readonly image?: ImageData; readonly runId?: string }
  | { readonly type: 'resumed'; readonly runId?: string }
  | LlmCallAnswer
  | {
      readonly type: 'toolCompleted';
      readonly effectId: string;
      readonly output: string;
      readonly isError?: boolean;
      readonly image?: ImageData;
      /** The observation's short form, once superseded (a browser action's result without its page state). */
      readonly brief?: string;
      /** Model calls the tool made itself (its own LLM use, a child agent), counted in the run's usage. */
      readonly usage?: LlmUsage & { readonly llmCalls: number };
      /** The tool's per-run data after the call (kept in `state.toolData` under the tool's name). */
      readonly data?: unknown;
      /** The result's parts beyond the text, for MCP clients (see `ToolOutput.content`); the model reads `output`. */
      readonly content?: readonly ToolContent[];
      /** The structured result, matching the tool's `outputSchema`. */
      readonly structured?: { readonly [key: string]: unknown };
    }
  /** An at-most-once tool is about to run this call (saved before it runs). */
  | { readonly type: 'toolStarted'; readonly effectId: string }
  /** A long-running tool recorded how far it got; a resumed call starts from there. */
  | {
      readonly type: 'toolProgressed';
      readonly effectId: string;
      readonly progress: unknown;
      /** Model calls the tool made since it last reported (a child agent's, as they happen). */
      readonly usage?: LlmUsage & { readonly llmCalls: number };
    }
  /** A tool paused on a person (a child agent waiting for approval): the run pauses with it. */
  | {
      readonly type: 'toolSuspended';
      readonly effectId: string;
      readonly progress: unknown;
      readonly waiting: readonly PendingInput[];
      /** Model calls the tool made before it paused. */
      readonly usage?: LlmUsage & { readonly llmCalls: number };
    }
  /**
   * A person was to be asked about a call (its approval, its question) whose arguments the tool's
   * schema refuses: the call is answered with that error instead, and nobody is asked. `error` is the
   * call's result as the model reads it (a tool message), not a run's error.
   */
  | { readonly type: 'callRefused'; readonly effectId: string; readonly error: string }
  | { readonly type: 'humanReplied'; readonly effectId: string; readonly answer: string }
  | { readonly type: 'approvalGiven'; readonly effectId: string }
  | { readonly type: 'approvalDenied'; readonly effectId: string; readonly reason?: string }
  /** A provider's context, or why it could not be had (the request goes without it). */
  | { readonly type: 'contextGathered'; readonly effectId: string; readonly data?: unknown; readonly error?: RunError }
  /** The tools the model may call changed (an MCP server's list changed, a server died). */
  /**
   * The run's tools are now `tools`: merged into the list the model saw (order kept, new ones at the
   * end, gone ones listed and answered as unavailable) — or, with `exact`, the list as given.
   */
  | { readonly type: 'toolsChanged'; readonly tools: readonly ToolSpec[]; readonly exact?: boolean }
  | { readonly type: 'cancelled'; readonly reason?: string }
  /** The shell could not go on (no performer for an effect, a checkpoint conflict): the run fails. */
  | { readonly type: 'faulted'; readonly error: RunError };

export type AgentEventType = AgentEvent['type'];

/** The answer a person gives to a pending input (approve, deny or reply), as an event. */
export type HostAnswer = Extract<AgentEvent, { type: 'humanReplied' | 'approvalGiven' | 'approvalDenied' }>;

/** An event of the host's own (the answer to its own effect), namespaced like `HostEffect`. */
export interface HostEvent {
  readonly type: `${string}:${string}`;
  readonly effectId?: string;
  readonly [field: string]: unknown;
}

/** Everything a step may be given. The default step ignores host events; the host's own step handles them. */
export type AnyEvent = AgentEvent | HostEvent;
