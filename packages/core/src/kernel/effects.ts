import type { ToolChoice } from './agent.js';
import type { Message, ToolCall } from './messages.js';
import type { FinishReason, Usage } from './state.js';
import type { ToolSpec } from './tool.js';

/** A model request: everything the LLM port needs, nothing it must look up. */
export interface LlmRequest {
  readonly messages: readonly Message[];
  readonly tools: readonly ToolSpec[];
  readonly toolChoice: ToolChoice;
  readonly profile?: string;
}

export interface RunResult {
  readonly finishReason: FinishReason;
  readonly answer: string;
  readonly usage: Usage;
  readonly error?: string;
}

/** Outputs of the reducer: what should happen next. Ids are derived from the state. */
export type Effect =
  | {
      readonly type: 'callLlm';
      readonly id: string;
      readonly request: LlmRequest;
    }
  | {
      readonly type: 'callTool';
      readonly id: string;
      readonly call: ToolCall;
      readonly args: unknown;
      readonly parallelSafe: boolean;
      readonly timeoutMs?: number;
    }
  | {
      readonly type: 'askHuman';
      readonly id: string;
      readonly callId: string;
      readonly question: string;
    }
  | {
      readonly type: 'requestApproval';
      readonly id: string;
      readonly call: ToolCall;
      readonly args: unknown;
    }
  | { readonly type: 'gatherContext'; readonly id: string; readonly provider: string }
  | { readonly type: 'emit'; readonly observation: Observation }
  | { readonly type: 'finish'; readonly result: RunResult };

/** Notable moments the host may want to show (progress lines, traces). */
export type Observation =
  | {
      readonly kind: 'stepStarted';
      readonly step: number;
      readonly maxSteps: number;
    }
  | { readonly kind: 'stuck'; readonly hint: string }
  | { readonly kind: 'memoryTrimmed'; readonly dropped: number }
  | { readonly kind: 'toolCallsIgnored'; readonly count: number };

export type EffectType = Effect['type'];
