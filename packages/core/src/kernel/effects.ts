import type { ToolChoice } from './agent.js';
import type { HostAnswer } from './events.js';
import type { Message, ToolCall } from './messages.js';
import type { RunError } from './runError.js';
import type { FinishReason, Usage } from './state.js';
import type { ToolSpec } from './tool.js';

/** Prompt-cache hints for the port (one that cannot use them ignores them). */
export interface CacheHints {
  /** Names the run: its requests should land on one cache (OpenAI's `prompt_cache_key`). */
  readonly key?: string;
  /**
   * How many leading `messages` are the stable part: the next request starts with these same
   * messages (a port with explicit cache control puts its breakpoint after them).
   */
  readonly stableMessages: number;
}

/** A model request: everything the LLM port needs, nothing it must look up. */
export interface LlmRequest {
  readonly messages: readonly Message[];
  readonly tools: readonly ToolSpec[];
  readonly toolChoice: ToolChoice;
  readonly profile?: string;
  readonly cache?: CacheHints;
}

export interface RunResult {
  readonly finishReason: FinishReason;
  readonly answer: string;
  readonly usage: Usage;
  readonly error?: RunError;
}

/** Outputs of the reducer: what should happen next. Ids derive from the state, so they are stable across a resume. */
export type Effect =
  | { readonly type: 'callLlm'; readonly id: string; readonly request: LlmRequest }
  | {
      readonly type: 'callTool';
      readonly id: string;
      readonly call: ToolCall;
      readonly args: unknown;
      readonly parallelSafe: boolean;
      readonly timeoutMs?: number;
      /** What the tool recorded before (a resumed call continues from it). */
      readonly progress?: unknown;
      /** A person's answer for the tool's paused work (a child agent's approval), ids relative to this call. */
      readonly answer?: HostAnswer;
    }
  | {
      readonly type: 'askHuman';
      readonly id: string;
      readonly call: ToolCall;
      readonly question: string;
      readonly args: unknown;
    }
  | { readonly type: 'requestApproval'; readonly id: string; readonly call: ToolCall; readonly args: unknown }
  | { readonly type: 'gatherContext'; readonly id: string; readonly provider: string }
  | { readonly type: 'emit'; readonly observation: Observation }
  | { readonly type: 'finish'; readonly result: RunResult };

/** Notable moments the host may want to show (progress lines, traces). */
export type Observation =
  /** A step began; `maxSteps` is the agent's step limit (`stepLimit`), when it has one. */
  | { readonly kind: 'stepStarted'; readonly step: number; readonly maxSteps?: number }
  /** A policy added a hint to the next request (stuck detection's "change strategy"). */
  | { readonly kind: 'hint'; readonly policy: string; readonly hint: string }
  /** The history shrank in one jump: messages newly left out, and sent ones rewritten (briefs, images). */
  | { readonly kind: 'memoryTrimmed'; readonly dropped: number; readonly shrunk: number }
  /** Older messages were summarised: requests now carry the summary instead of them. */
  | { readonly kind: 'memoryCompacted'; readonly summarised: number }
  /** The summary could not be written: the request goes without it (cut to the window instead). */
  | { readonly kind: 'compactionFailed'; readonly error: string }
  | { readonly kind: 'toolCallsIgnored'; readonly count: number }
  /** The budget was checked with an estimate: the configured tokenizer was not loaded. */
  | { readonly kind: 'tokensEstimated'; readonly tokenizer: string };

export type EffectType = Effect['type'];

/**
 * An effect of the host's own, from its own policy or step: a namespaced type (`billing:charge`)
 * so it never collides with the built-in ones, performed by the performer the host registers for it.
 */
export interface HostEffect {
  readonly type: `${string}:${string}`;
  readonly id: string;
  readonly [field: string]: unknown;
}

/** Everything a step may ask for: the built-in effects and the host's own. */
export type AnyEffect = Effect | HostEffect;
