import type { RunError } from '../kernel/runError.js';
import type { Usage } from '../kernel/state.js';
import type { LlmPort } from '../llm/llm.js';
import type { HostCallbacks, ResourcePool } from './scope.js';
import type { CheckpointStore } from './store.js';

/**
 * How a run ended, an agent's (`RunOutcome`) or a flow's (`@openmanus/flow`'s `FlowOutcome`): one
 * shape, so that a host reports, saves or retries either with the same code.
 */
export interface Outcome<State = unknown, Status extends string = string, Reason extends string = string> {
  /** `finished`/`failed`, or a pause waiting for a person (an agent's run). */
  readonly status: Status;
  readonly finishReason?: Reason;
  readonly answer: string;
  /** Why the run failed or stopped early: `code` tells a rate limit (`LLM_RATE_LIMIT`) from an auth failure (`LLM_AUTH`). */
  readonly error?: RunError;
  readonly usage: Usage;
  readonly state: State;
}

/** The options of every run, an agent's (`RunOptions`) or a flow's (`FlowRunOptions`). */
export interface SharedRunOptions<State extends object> extends HostCallbacks {
  readonly llm: LlmPort;
  readonly signal?: AbortSignal;
  /** Gets the state after every transition. */
  readonly checkpoint?: (state: State) => Promise<void> | void;
  /** Saves every transition under the run's id; two writers of one run cannot overwrite each other. */
  readonly store?: CheckpointStore<State>;
  /** Time limit for a tool call without its own `timeoutMs`. */
  readonly toolTimeoutMs?: number;
  readonly workspace?: string;
  /** Resources shared beyond this run (the host closes them); by default each run has its own, closed at its end. */
  readonly resources?: ResourcePool;
}
