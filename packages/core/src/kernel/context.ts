import type { Message } from './messages.js';
import type { AgentState } from './state.js';

/** The parts of the next request a context provider may change; never stored in memory. */
export interface RequestAdditions {
  readonly nextStepPrompt: string;
  /** Messages sent after the history, before the next-step prompt (e.g. a screenshot). */
  readonly messages: readonly Message[];
}

/**
 * Fresh context fed into a step, the way OpenManus feeds the browser page into Manus's next
 * think. `when` and `apply` are pure and run inside the reducer; the gathering is an effect
 * that the interpreter runs with the agent's `contextGatherers[name]`.
 */
export interface ContextProvider {
  readonly name: string;
  /** Gather before this step's request? */
  readonly when: (state: AgentState) => boolean;
  /** What the gathered data (JSON; `undefined` if gathering failed) adds to the request. */
  readonly apply: (gathered: unknown, request: RequestAdditions) => RequestAdditions;
}

/** What was asked for and what came back, for the current step only. */
export interface ContextState {
  readonly pending: readonly string[];
  readonly gathered: Readonly<Record<string, unknown>>;
}
