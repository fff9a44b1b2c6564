import type { EventEmitter } from 'eventemitter3';
import type { Effect, Observation } from '../kernel/effects.js';
import type { AgentEvent } from '../kernel/events.js';
import type { AgentState, FinishReason, PendingInput, RunStatus } from '../kernel/state.js';
import { lazyModule } from '../lazyModule.js';
import type { LlmDelta } from '../llm/llm.js';
import type { Outcome } from './outcome.js';
import type { LogLevel, ToolProgress } from './toolRequests.js';

/** Where a run item comes from when a child agent produced it: the tool call that ran the child, outermost first. */
export interface ItemOrigin {
  readonly tool: string;
  readonly effectId: string;
  /** The agent the tool call ran (an `agentTool`), and its model: what a trace names the child run after. */
  readonly agent?: string;
  readonly model?: string;
}

/**
 * One thing that happened in a run, in order: an effect starting, an event applied, an
 * observation, a piece of a streaming model reply (`delta`, for the `callLlm` effect it names;
 * the reply itself still arrives as the `llmResponded` event), the result.
 */
export type RunItem = (
  | { readonly type: 'effect'; readonly effect: Exclude<Effect, { type: 'emit' | 'finish' }> }
  | ({ readonly type: 'delta'; readonly effectId: string } & LlmDelta)
  | { readonly type: 'event'; readonly event: AgentEvent; readonly state: AgentState }
  | { readonly type: 'observation'; readonly observation: Observation }
  | { readonly type: 'result'; readonly result: RunOutcome }
  /** A tool call's report of how far it got (`scope.reportProgress`, an MCP server's progress notification). */
  | ({ readonly type: 'progress'; readonly effectId: string; readonly tool: string } & ToolProgress)
  /** A line of a tool call's log (`scope.log`, an MCP server's log notification). */
  | {
      readonly type: 'log';
      readonly effectId: string;
      readonly tool: string;
      readonly level: LogLevel;
      readonly logger?: string;
      readonly data: unknown;
    }
) & { readonly origin?: readonly ItemOrigin[] };

/** How an agent's run ended: finished, failed, or paused waiting for a person (answer `pending` with `resumeWith`). */
export interface RunOutcome extends Outcome<AgentState, RunStatus, FinishReason> {
  /** What the paused run waits for from people, with the effect ids to answer. */
  readonly pending: readonly PendingInput[];
  readonly runId: string;
}

export type RunEmitter = EventEmitter<{
  [K in RunItem['type']]: (item: Extract<RunItem, { type: K }>) => void;
}>;

// Loaded with the first emitter: a run without one never needs it.
const eventemitter3 = lazyModule<typeof import('eventemitter3')>('eventemitter3');

export const createRunEmitter = (): RunEmitter => new (eventemitter3().EventEmitter)() as RunEmitter;

/**
 * A run item for the wire (JSON lines, server-sent events): events carry the status, step and
 * usage instead of the whole state, model requests their size instead of the history, so what
 * a client receives per step stays small however long the run.
 */
export function compactRunItem(item: RunItem): object {
  const origin = item.origin ? { origin: item.origin } : {};
  switch (item.type) {
    case 'event': {
      const { status, step, usage } = item.state;
      return { type: 'event', event: item.event, status, step, usage, ...origin };
    }
    case 'effect':
      return item.effect.type === 'callLlm'
        ? {
            type: 'effect',
            effect: { type: 'callLlm', id: item.effect.id, messages: item.effect.request.messages.length },
            ...origin,
          }
        : item;
    case 'result': {
      const { state, ...result } = item.result;
      return { type: 'result', result: { ...result, step: state.step }, ...origin };
    }
    case 'observation':
    case 'delta':
    case 'progress':
    case 'log':
      return item;
  }
}
