import type { ImageData, ToolCall } from './messages.js';

export interface LlmUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
}

/** Inputs to the reducer: what happened. */
export type AgentEvent =
  | {
      readonly type: 'started';
      readonly input: string;
      readonly image?: ImageData;
    }
  | { readonly type: 'resumed' }
  | {
      readonly type: 'llmResponded';
      readonly content: string;
      readonly toolCalls: readonly ToolCall[];
      readonly usage?: LlmUsage;
    }
  | { readonly type: 'llmFailed'; readonly error: string }
  | {
      readonly type: 'toolCompleted';
      readonly callId: string;
      readonly output: string;
      readonly isError?: boolean;
      readonly image?: ImageData;
      /** Model calls the tool made itself (through its context's LLM port), counted in the run's usage. */
      readonly usage?: LlmUsage & { readonly llmCalls: number };
    }
  | {
      readonly type: 'humanReplied';
      readonly callId: string;
      readonly answer: string;
    }
  | { readonly type: 'approvalGiven'; readonly callId: string }
  | {
      readonly type: 'approvalDenied';
      readonly callId: string;
      readonly reason?: string;
    }
  | { readonly type: 'contextGathered'; readonly provider: string; readonly data?: unknown; readonly error?: string }
  | { readonly type: 'cancelled'; readonly reason?: string };

export type AgentEventType = AgentEvent['type'];
