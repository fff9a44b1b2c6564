import {
  type Agent,
  type AgentState,
  type PendingInput,
  pendingInputs,
  type RunOptions,
  type RunOutcome,
  run,
  type Usage,
} from '@openmanus/core';
import { answersBySignal } from './hostAnswers.js';
import { recordedPerformers } from './recordedPerformers.js';
import type { DurableRuntime } from './runtime.js';

/** What a run publishes after every transition (key `progress`): small, whatever the history's length. */
export interface RunProgress {
  readonly status: AgentState['status'];
  readonly step: number;
  readonly usage: Usage;
  /** What the run waits for from people: answer with `DurableClient.answer`. */
  readonly pending: readonly PendingInput[];
}

/**
 * Options of a durable run: core's, less what the durable run owns (the id, the performers,
 * checkpoints, and people's answers, which come as messages to the run).
 */
export interface DurableRunOptions
  extends Omit<RunOptions, 'runId' | 'performers' | 'checkpoint' | 'store' | 'onHuman' | 'onApproval'> {
  /** How long the run waits for a person's answer before it pauses (default 7 days). */
  readonly answerTimeoutMs?: number;
}

const WEEK_MS = 7 * 24 * 60 * 60 * 1000;

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
  const { answerTimeoutMs = WEEK_MS, ...runOptions } = options;
  const recorded = recordedPerformers(runtime);
  const answers = answersBySignal(runtime, answerTimeoutMs);
  return run(agent, input, {
    ...runOptions,
    runId: runtime.runId,
    performers: (defaults) => ({ ...recorded(defaults), ...answers }),
    checkpoint: (state) => runtime.publish('progress', progressOf(agent, state)),
  });
}

const progressOf = (agent: Agent, state: AgentState): RunProgress => ({
  status: state.status,
  step: state.step,
  usage: state.usage,
  pending: pendingInputs(agent.config, state),
});
