import type { LlmPort, RunOutcome, Usage } from '@openmanus/core';
import {
  type AgentReport,
  agentFinished,
  type CurrentStep,
  type FlowEvent,
  type FlowObservation,
  type FlowOutcome,
  type FlowState,
  type FlowStatus,
  type Plan,
  type PlanningFlow,
  planOf,
  runFlow,
} from '@openmanus/flow';
import { FlowCancelledError } from './cancelled.js';
import type { RunEventItem } from './durableRun.js';
import type { ExecutorRunRequest } from './names.js';
import type { DurableRuntime } from './runtime.js';

/** What a durable flow needs of its engine besides a run's: agent runs started as its children. */
export interface DurableFlowRuntime extends DurableRuntime {
  /**
   * Starts an agent run as a child of this flow under `runId`; starting the same id again (as a
   * replay does) gives the run already there. Resolves once the run exists, with its outcome to
   * await: the run's final one, however many parts a long run continued as, and a way to cancel it
   * (with its later parts).
   */
  startRun(
    runId: string,
    request: ExecutorRunRequest,
  ): Promise<{ outcome(): Promise<RunOutcome>; cancel(): Promise<void> }>;
}

export interface DurableFlowOptions {
  /** The model for the plan and the summary (each executor's run has its own). */
  readonly llm: LlmPort;
  /** Stops the flow's work in flight (its model call); the runtime's `cancelled` does too. */
  readonly signal?: AbortSignal;
}

/** What a flow publishes after every transition (key `progress`). */
export interface FlowProgress {
  readonly status: FlowStatus;
  readonly plan: Plan;
  readonly current?: CurrentStep;
  /** The executor's run in flight, a run of its own: read it with `getRun`, answer it with `answer`. */
  readonly runId?: string;
  readonly usage: Usage;
}

/** A flow's event as observers read it: an executor's report without its state (its run holds that). */
export type FlowEventBrief =
  | Exclude<FlowEvent, { type: 'agentFinished' }>
  | {
      readonly type: 'agentFinished';
      readonly effectId: string;
      readonly report: Omit<AgentReport, 'state'>;
    };

/** One thing that happened in a flow, as `streamFlowEvents` reads it: a transition of the flow, or of an executor's run. */
export type FlowEventItem =
  | {
      readonly type: 'flow';
      readonly event: FlowEventBrief;
      readonly status: FlowStatus;
      readonly usage: Usage;
      readonly observations: readonly FlowObservation[];
    }
  | {
      readonly type: 'agent';
      /** The executor's run: `{flowId}/{effect id}`. */
      readonly runId: string;
      readonly executor: string;
      /** The plan step it works on (none for a summary the primary agent writes). */
      readonly stepIndex?: number;
      readonly item: RunEventItem;
    };

/** What the flow's stream holds: its transitions, and where each executor's run starts (its items are the run's own stream). */
export type StoredFlowItem =
  | Extract<FlowEventItem, { type: 'flow' }>
  | (Omit<Extract<FlowEventItem, { type: 'agent' }>, 'item' | 'type'> & { readonly type: 'run' });

/** The id of the executor run answering a flow's `runAgent` effect (runFlow's own naming). */
export const agentRunId = (flowId: string, effectId: string): string => `${flowId}/${effectId}`;

/**
 * A planning flow (the same driver, reducer and shell as `runFlow`) inside a durable runtime: the
 * flow's model calls are recorded steps keyed by effect id, and each executor's step is an agent
 * run started as a child of the flow (`{flowId}/{effect id}`) and awaited. After a crash the engine
 * calls this again and it replays: recorded model calls come back, started runs are awaited again
 * (a child that was cut off resumes where it was), so no finished call or step repeats.
 */
export async function durableFlow(
  runtime: DurableFlowRuntime,
  flow: PlanningFlow,
  input: string,
  options: DurableFlowOptions,
): Promise<FlowOutcome> {
  const flowId = runtime.runId;
  // runFlow's id is the time it started: recorded, so that a replay makes the same plan.
  const planId = await runtime.runStep('plan-id', async () => `plan_${Date.now()}`);
  // The flow's time limit counts from its first start, not from a replay's.
  const startedAt = await runtime.runStep('started-at', async () => Date.now());
  // The transition being saved: the checkpoint writes it, in the transition's turn, so the writes
  // come in the same order on every replay.
  let applied: { event: FlowEvent; observations: FlowObservation[] } | undefined;
  const observed: PlanningFlow = {
    ...flow,
    step: (state, event) => {
      const [next, effects] = flow.step(state, event);
      const observations = effects.flatMap((effect) => (effect.type === 'emit' ? [effect.observation] : []));
      applied = { event, observations };
      return [next, effects];
    },
  };
  // Heard from a step's run when the flow was cancelled with it, before the engine told the flow.
  const cancelledWithRun = new AbortController();
  const signals = [options.signal, runtime.cancelled, cancelledWithRun.signal].filter(
    (s): s is AbortSignal => s !== undefined,
  );
  // Step runs cancelled because the flow ran out of time: awaited before the flow returns.
  const stopping: Promise<void>[] = [];
  const outcome = await runFlow(observed, input, {
    llm: options.llm,
    flowId,
    planId,
    startedAt,
    signal: AbortSignal.any(signals),
    performers: (defaults) => ({
      // Asked for when the effect is performed, before any await: the order of keys is the state's.
      callLlm: (effect, context) => runtime.runStep(effect.id, async () => defaults.callLlm(effect, context)),
      runAgent: async (effect, context) => {
        const runId = agentRunId(flowId, effect.id);
        const request: ExecutorRunRequest = {
          agent: effect.executor,
          input: effect.prompt,
          ...(effect.state ? { state: effect.state } : {}),
        };
        const child = await runtime.startRun(runId, request);
        const step = effect.stepIndex !== undefined ? { stepIndex: effect.stepIndex } : {};
        await runtime.stream('events', {
          type: 'run',
          runId,
          executor: effect.executor,
          ...step,
        } satisfies StoredFlowItem);
        // The flow ran out of time with this step's run in flight: the run stops too, as in process.
        // (A cancelled flow's run is cancelled with it; a worker that stops leaves both to resume.)
        const stopRun = () => {
          if (context.state().finishReason === 'timeout') stopping.push(child.cancel());
        };
        context.signal.addEventListener('abort', stopRun, { once: true });
        let outcome: RunOutcome;
        try {
          outcome = await child.outcome();
        } catch (error) {
          // The flow stops as cancelled; nothing after this is performed.
          if (error instanceof FlowCancelledError) {
            cancelledWithRun.abort(new Error('the flow was cancelled'));
            return undefined;
          }
          // The run itself failed (its worker has no such agent, it was cancelled on its own): the
          // flow judges the step as a failed attempt (tried again up to its limit, then blocked).
          const reason = error instanceof Error ? error.message : String(error);
          return { type: 'agentFailed', effectId: effect.id, error: `the ${effect.executor} run failed: ${reason}` };
        } finally {
          context.signal.removeEventListener('abort', stopRun);
        }
        return agentFinished(effect, outcome);
      },
    }),
    checkpoint: async (state) => {
      if (applied) {
        const { event, observations } = applied;
        const item: StoredFlowItem = {
          type: 'flow',
          event: brief(event),
          status: state.status,
          usage: state.usage,
          observations,
        };
        await runtime.stream('events', item);
      }
      await runtime.publish('progress', progressOf(flowId, state));
    },
  });
  await Promise.all(stopping);
  return outcome;
}

function brief(event: FlowEvent): FlowEventBrief {
  if (event.type !== 'agentFinished') return event;
  const { state: _memory, ...report } = event.report;
  return { ...event, report };
}

function progressOf(flowId: string, state: FlowState): FlowProgress {
  const { status, current, awaiting, usage } = state;
  return {
    status,
    plan: planOf(state),
    ...(current ? { current } : {}),
    ...(awaiting?.type === 'runAgent' ? { runId: agentRunId(flowId, awaiting.id) } : {}),
    usage,
  };
}
