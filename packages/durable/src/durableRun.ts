import {
  type Agent,
  type AgentState,
  type AnyEvent,
  createRunEmitter,
  type PendingInput,
  pendingInputs,
  type RunOutcome,
  run,
  type StartOptions,
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

/** One transition of the run as observers read it (stream `events`): the event, and the run's progress after it. */
export interface RunEventItem {
  readonly event: AnyEvent;
  readonly status: AgentState['status'];
  readonly step: number;
  readonly usage: Usage;
}

/**
 * Options of a durable run: core's, less what the durable run owns (the id, the performers,
 * checkpoints, items, and people's answers, which come as messages to the run). `state` continues
 * a conversation (a flow executor's memory).
 */
export interface DurableRunOptions
  extends Omit<
    StartOptions,
    'runId' | 'performers' | 'checkpoint' | 'store' | 'emitter' | 'onHuman' | 'onApproval' | 'image'
  > {
  /** How long the run waits for a person's answer before it pauses (default 7 days). */
  readonly answerTimeoutMs?: number;
}

const WEEK_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * Core's agent run (the same driver, reducer and performers as `run`) inside a durable runtime:
 * every model, tool and context call is a recorded step keyed by its effect id, and after each
 * transition the event is streamed (`events`) and the progress published (`progress`). Call it
 * from the engine's workflow body; after a crash the engine calls it again and it replays to
 * where it stopped.
 */
export function durableRun(
  runtime: DurableRuntime,
  agent: Agent,
  input: string,
  options: DurableRunOptions,
): Promise<RunOutcome> {
  const { answerTimeoutMs = WEEK_MS, ...runOptions } = options;
  const recorded = recordedPerformers(runtime, agent);
  const answers = answersBySignal(runtime, answerTimeoutMs);
  // The event of the transition being saved: the checkpoint writes it, in the transition's turn,
  // so the writes come in the same order on every replay.
  let applied: AnyEvent | undefined;
  const emitter = createRunEmitter();
  emitter.on('event', (item) => {
    applied = item.event;
  });
  return run(agent, input, {
    ...runOptions,
    runId: runtime.runId,
    emitter,
    performers: (defaults) => ({ ...recorded(defaults), ...answers }),
    checkpoint: async (state) => {
      const { status, step, usage } = state;
      if (applied) await runtime.stream('events', { event: applied, status, step, usage } satisfies RunEventItem);
      const pending = pendingInputs(agent.config, state);
      await runtime.publish('progress', { status, step, usage, pending } satisfies RunProgress);
    },
  });
}
