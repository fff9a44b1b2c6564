// PlanningFlow as data: its config, state, events and effects. The reducer is flowStep.ts.
import type {
  FinishReason as AgentFinishReason,
  AgentState,
  LlmCallAnswer,
  LlmRequest,
  RunError,
  RunStatus,
  ToolSpec,
  Usage,
} from '@openmanus/core/kernel';
import type { PlanBook } from './plans.js';

/** Version of the saved flow format. */
export const FLOW_SCHEMA_VERSION = 2;

/** An agent the flow may hand steps to, as the planner reads about it. */
export interface ExecutorInfo {
  readonly key: string;
  readonly name: string;
  readonly description: string;
}

/** What the flow does once a step is blocked (its executor gave up, or every attempt failed). */
export type WhenBlocked = 'continue' | 'replan' | 'stop';

/** Everything the reducer decides with: plain data, so a flow's behaviour is fixed by its config. */
export interface FlowConfig {
  /** Every agent of the flow, the primary first (it writes the summary when the model cannot). */
  readonly agents: readonly ExecutorInfo[];
  /** The keys of the agents that take plan steps, in order of preference. */
  readonly executors: readonly string[];
  /** The planning tool as the model sees it when making or changing the plan. */
  readonly planningTool: ToolSpec;
  /** Runs of one step before it is blocked, when runs fail (an error, the step limit). */
  readonly maxAttempts: number;
  readonly whenBlocked: WhenBlocked;
  /** Replans one flow may ask for, when `whenBlocked` is `replan`. */
  readonly maxReplans: number;
  /** `keep`: an executor remembers its earlier steps (OpenManus); `clear`: every step starts afresh. */
  readonly executorMemory: 'keep' | 'clear';
  /** Longest the whole flow may run, in ms, counted from its start or its latest resume. */
  readonly timeoutMs: number;
  /** The LLM profile for planning and the summary (the port's default without one). */
  readonly profile?: string;
}

export type FlowStatus = 'idle' | 'planning' | 'running' | 'replanning' | 'summarising' | 'finished' | 'failed';

/**
 * Why a flow ended: every step done (some may be blocked), stopped at a blocked step, out of
 * time, cancelled, or an error (no plan could be made, the shell failed).
 */
export type FlowFinishReason = 'completed' | 'stopped' | 'timeout' | 'cancelled' | 'error';

/** The step being worked on. */
export interface CurrentStep {
  readonly index: number;
  readonly executor: string;
  /** 1 for the first run of the step. */
  readonly attempt: number;
  /** Why the previous attempt failed (its prompt says so). */
  readonly failure?: string;
}

/** A step that could not be done, kept for the replanning request. */
export interface BlockedStep {
  readonly index: number;
  readonly reason: string;
}

/** How one executor run ended, as the flow judges steps by it. */
export interface AgentReport {
  readonly status: RunStatus;
  readonly finishReason?: AgentFinishReason;
  readonly answer: string;
  readonly error?: RunError;
  /** Usage of this run only. */
  readonly usage: Usage;
  /** The executor's state at the end of the run (kept as its memory when the flow keeps memory). */
  readonly state: AgentState;
}

/** Everything about a flow, as JSON-serialisable data. */
export interface FlowState {
  readonly kind: 'planningFlow';
  readonly schemaVersion: typeof FLOW_SCHEMA_VERSION;
  /** Given by the host or made by the shell; executor runs are `{flowId}/{effect id}`. */
  readonly flowId?: string;
  readonly status: FlowStatus;
  readonly input: string;
  readonly planId: string;
  /** The flow's plans (one, unless a replan made another): the planning tool's data. */
  readonly plans: PlanBook;
  /** Counts effects; their ids derive from it. */
  readonly seq: number;
  /** The effect the flow waits for: a resume performs it again. */
  readonly awaiting?: FlowWork;
  readonly current?: CurrentStep;
  readonly blocked?: BlockedStep;
  /** Each finished step's answer (or why it was blocked), in order. */
  readonly results: readonly string[];
  /** Executors' states between steps, by key, when the flow keeps their memory. */
  readonly memory: Readonly<Record<string, AgentState>>;
  readonly replans: number;
  /** The flow's own model calls and every executor run's. */
  readonly usage: Usage;
  readonly finishReason?: FlowFinishReason;
  readonly answer?: string;
  /** Why the flow failed or stopped early, coded as a run's error (`FLOW_TIMEOUT`, `LLM_RATE_LIMIT`, …). */
  readonly error?: RunError;
}

/** What a flow's model call is for. */
export type LlmPurpose = 'plan' | 'replan' | 'summary';

/** The work effects: what the flow waits for, one at a time. */
export type FlowWork =
  | { readonly type: 'callLlm'; readonly id: string; readonly purpose: LlmPurpose; readonly request: LlmRequest }
  | {
      readonly type: 'runAgent';
      readonly id: string;
      readonly executor: string;
      readonly prompt: string;
      /** The plan step it works on (none for the summary an agent writes). */
      readonly stepIndex?: number;
    };

/** Notable moments a host may show: the plan was made up, a step retried or blocked, a replan refused. */
export type FlowObservation =
  | { readonly kind: 'planFallback'; readonly reason: string }
  | { readonly kind: 'stepRetried'; readonly index: number; readonly attempt: number; readonly reason: string }
  | { readonly kind: 'stepBlocked'; readonly index: number; readonly reason: string }
  | { readonly kind: 'planKept'; readonly reason: string };

/** Outputs of the flow's reducer. A `runAgent` carries the executor's memory when the flow keeps it. */
export type FlowEffect =
  | Extract<FlowWork, { type: 'callLlm' }>
  | (Extract<FlowWork, { type: 'runAgent' }> & { readonly state?: AgentState })
  | { readonly type: 'emit'; readonly observation: FlowObservation };

/** Inputs of the flow's reducer. Answers carry the id of the effect they answer. */
export type FlowEvent =
  | { readonly type: 'started'; readonly input: string; readonly planId: string; readonly flowId?: string }
  | { readonly type: 'resumed'; readonly flowId?: string }
  | LlmCallAnswer
  | { readonly type: 'agentFinished'; readonly effectId: string; readonly report: AgentReport }
  /** The executor could not be run at all (its run threw). */
  | { readonly type: 'agentFailed'; readonly effectId: string; readonly error: string }
  | { readonly type: 'timedOut'; readonly afterMs: number }
  | { readonly type: 'cancelled'; readonly reason: string }
  | { readonly type: 'faulted'; readonly error: RunError };

export const isFlowFinal = (state: FlowState): boolean => state.status === 'finished' || state.status === 'failed';
