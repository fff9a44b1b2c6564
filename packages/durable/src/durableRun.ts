import { type Agent, type AgentState, type RunOptions, type RunOutcome, run, type Usage } from '@openmanus/core';
import { recordedPerformers } from './recordedPerformers.js';
import type { DurableRuntime } from './runtime.js';

/** What a run publishes after every transition (key `progress`): small, whatever the history's length. */
export interface RunProgress {
  readonly status: AgentState['status'];
  readonly step: number;
  readonly usage: Usage;
}

/** Options of a durable run: core's, less what the durable run owns (the id, the performers, checkpoints). */
export type DurableRunOptions = Omit<RunOptions, 'runId' | 'performers' | 'checkpoint' | 'store'>;

/**
 * Core's agent run (the same driver, reducer and performers as `run`) inside a durable runtime:
 * every model, tool and context call is a recorded step keyed by its effect id, and the run's
 * progress is published after each transition. Call it from the engine's workflow body; after a
 * crash the engine calls it again and it replays to where it stopped.
 */
export function durableRun(
  runtime: DurableRuntime,
  agent: Agent,
  input: string,
  options: DurableRunOptions,
): Promise<RunOutcome> {
  return run(agent, input, {
    ...options,
    runId: runtime.runId,
    performers: recordedPerformers(runtime),
    checkpoint: (state) => runtime.publish('progress', progressOf(state)),
  });
}

const progressOf = (state: AgentState): RunProgress => ({ status: state.status, step: state.step, usage: state.usage });
