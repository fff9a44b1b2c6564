/**
 * The flow's shell: core's one driver runs the flow's reducer, with performers for its two kinds
 * of work — a model call, and an executor agent's run (itself core's `run`, on the same driver).
 */

import {
  createResourcePool,
  createRunEmitter,
  InvalidStateError,
  type LlmPort,
  messageOf,
  type Outcome,
  type Performer,
  type RunItem,
  type RunOutcome,
  run,
  type SharedRunOptions,
} from '@openmanus/core';
import { answerLlmCall, drive, type ItemSink, itemStream, type Machine } from '@openmanus/core/internal';
import { emptyUsage, usageSince } from '@openmanus/core/kernel';
import { restoreFlow } from './flowSchema.js';
import {
  type FlowEffect,
  type FlowEvent,
  type FlowFinishReason,
  type FlowObservation,
  type FlowState,
  type FlowStatus,
  isFlowFinal,
} from './flowState.js';
import { initialFlowState, planOf } from './flowStep.js';
import type { PlanningFlow } from './planningFlow.js';
import type { Plan } from './plans.js';

/** A flow's options: those of every run (`llm` is the model of the plan, the summary and executors without one in `llms`), and the flow's own. */
export interface FlowRunOptions extends SharedRunOptions<FlowState> {
  /** An executor's own model, by its key (as `[llm.<name>]` profiles give each agent its own). */
  readonly llms?: Readonly<Record<string, LlmPort>>;
  /** The flow's id (default: the saved state's, else a new UUID); executor runs are `{flowId}/{effect id}`. */
  readonly flowId?: string;
  /** The plan's id (default `plan_<ms since 1970>`, as OpenManus); a durable flow gives one its replay gives again. */
  readonly planId?: string;
  /**
   * When the flow started, in ms since 1970: its `timeoutMs` counts from then (default: now). A
   * durable flow gives the time it recorded, so that a replay does not grant the flow its whole limit again.
   */
  readonly startedAt?: number;
  /**
   * Performers replacing the flow's own, made from them (to wrap them: a durable flow records each
   * model call as an engine step and runs each executor as a child workflow).
   */
  readonly performers?: (defaults: FlowPerformers) => Partial<FlowPerformers>;
}

/** How the flow's effects are performed, by effect type: its model calls, its executors' runs, its notes. */
export type FlowPerformers = {
  readonly [T in FlowEffect['type']]: Performer<FlowState, FlowEvent, Extract<FlowEffect, { type: T }>>;
};

/** The event answering a `runAgent` effect with the outcome of the executor's run. */
export function agentFinished(
  effect: Extract<FlowEffect, { type: 'runAgent' }>,
  outcome: RunOutcome,
): Extract<FlowEvent, { type: 'agentFinished' }> {
  const { status, answer, state } = outcome;
  const report = {
    status,
    answer,
    state,
    usage: usageSince(outcome.usage, effect.state?.usage ?? emptyUsage),
    ...(outcome.finishReason ? { finishReason: outcome.finishReason } : {}),
    ...(outcome.error ? { error: outcome.error } : {}),
  };
  return { type: 'agentFinished', effectId: effect.id, report };
}

/**
 * How a flow ended, in the shape of an agent run's outcome (`Outcome`): its `answer` is the summary
 * (`Plan completed: …`), or each step's result when the flow stopped early; its `error.code` as a
 * run's (`FLOW_TIMEOUT`, `LLM_AUTH`, `CANCELLED`, …).
 */
export interface FlowOutcome extends Outcome<FlowState, FlowStatus, FlowFinishReason> {
  readonly plan: Plan;
  /** Each finished step's answer, or why it was blocked. */
  readonly results: readonly string[];
  readonly flowId: string;
}

/** One thing that happened in a flow, in order: its own effects, events and observations, its executors' run items, the result. */
export type FlowItem =
  | { readonly type: 'effect'; readonly effect: Exclude<FlowEffect, { type: 'emit' }> }
  | { readonly type: 'event'; readonly event: FlowEvent; readonly state: FlowState }
  | { readonly type: 'observation'; readonly observation: FlowObservation }
  /** An item of an executor's run: the step it works on (none for the summary), and the item as core's `stream` yields it. */
  | {
      readonly type: 'agent';
      readonly executor: string;
      readonly effectId: string;
      readonly stepIndex?: number;
      readonly item: RunItem;
    }
  | { readonly type: 'result'; readonly result: FlowOutcome };

/** Runs a task as a planning flow, to its end. */
export async function runFlow(flow: PlanningFlow, input: string, options: FlowRunOptions): Promise<FlowOutcome> {
  return startFlow(flow, input, options);
}

/**
 * The same flow as `runFlow`, as an async iterator of its items and its executors'; the last is
 * the result. Leaving the loop early cancels the flow.
 */
export function streamFlow(
  flow: PlanningFlow,
  input: string,
  options: FlowRunOptions,
): AsyncIterableIterator<FlowItem> {
  return itemStream<FlowItem>((sink, signal) => startFlow(flow, input, { ...options, signal }, sink), options.signal);
}

/**
 * Continues a saved flow (a state, or the id of one in `options.store`): what it was waiting for
 * is done again — a step interrupted midway runs again from its start, with the executor's memory
 * as it was before that step.
 */
export async function resumeFlow(flow: PlanningFlow, saved: unknown, options: FlowRunOptions): Promise<FlowOutcome> {
  if (typeof saved === 'string') {
    if (!options.store) throw new TypeError(`resuming flow "${saved}" needs a store to load it from`);
    const stored = await options.store.load(saved);
    if (!stored) throw new Error(`flow "${saved}" is not in the store`);
    const state = await restoreFlow(stored.state);
    return driveFlow(flow, state, { type: 'resumed', flowId: saved }, options, stored.version);
  }
  const state = await restoreFlow(saved);
  const flowId = options.flowId ?? state.flowId ?? crypto.randomUUID();
  const version = options.store ? ((await options.store.load(flowId))?.version ?? 0) : 0;
  return driveFlow(flow, state, { type: 'resumed', flowId }, options, version);
}

async function startFlow(
  flow: PlanningFlow,
  input: string,
  options: FlowRunOptions,
  sink?: ItemSink<FlowItem>,
): Promise<FlowOutcome> {
  const flowId = options.flowId ?? crypto.randomUUID();
  if (options.store && (await options.store.load(flowId))) {
    throw new InvalidStateError(`flow "${flowId}" is already in the store: continue it with resumeFlow`);
  }
  // Plans are the flow's own data, so the id needs to be unique within the flow only.
  const started: FlowEvent = { type: 'started', input, planId: options.planId ?? `plan_${Date.now()}`, flowId };
  return driveFlow(flow, initialFlowState(), started, options, 0, sink);
}

async function driveFlow(
  flow: PlanningFlow,
  from: FlowState,
  first: FlowEvent,
  options: FlowRunOptions,
  storedVersion: number,
  sink?: ItemSink<FlowItem>,
): Promise<FlowOutcome> {
  const flowId =
    (first.type === 'started' || first.type === 'resumed' ? first.flowId : undefined) ?? crypto.randomUUID();
  const { store, llm } = options;
  let version = storedVersion;
  let ended = false;
  // Nothing the flow started (an executor still stopping) speaks after it returned.
  const announce = (item: FlowItem) => (ended ? undefined : sink?.(item));
  const pool = options.resources ?? createResourcePool();

  const defaults: FlowPerformers = {
    callLlm: (effect, { signal }) => answerLlmCall(llm, effect, { signal }),
    runAgent: async (effect, { signal }) => {
      const agent = flow.agents[effect.executor];
      if (!agent)
        return { type: 'agentFailed', effectId: effect.id, error: `the flow has no agent "${effect.executor}"` };
      const emitter = createRunEmitter();
      const tag = {
        executor: effect.executor,
        effectId: effect.id,
        ...(effect.stepIndex !== undefined ? { stepIndex: effect.stepIndex } : {}),
      };
      const forward = (item: RunItem) => void announce({ type: 'agent', ...tag, item });
      for (const type of ['effect', 'event', 'observation', 'result'] as const) emitter.on(type, forward);
      // Executors stream their model's replies only when someone reads the flow's items.
      if (sink) emitter.on('delta', forward);
      try {
        const outcome = await run(agent, effect.prompt, {
          llm: options.llms?.[effect.executor] ?? llm,
          runId: `${flowId}/${effect.id}`,
          signal,
          emitter,
          resources: pool,
          ...(effect.state ? { state: effect.state } : {}),
          ...(options.workspace !== undefined ? { workspace: options.workspace } : {}),
          ...(options.toolTimeoutMs !== undefined ? { toolTimeoutMs: options.toolTimeoutMs } : {}),
          ...(options.onHuman ? { onHuman: options.onHuman } : {}),
          ...(options.onApproval ? { onApproval: options.onApproval } : {}),
          // A tool's form for a person and its requests for the model (an MCP server's elicitation and sampling).
          ...(options.onElicitation ? { onElicitation: options.onElicitation } : {}),
          ...(options.onSampling ? { onSampling: options.onSampling } : {}),
        });
        return agentFinished(effect, outcome);
      } catch (error) {
        return {
          type: 'agentFailed',
          effectId: effect.id,
          error: `the ${effect.executor} run could not start: ${messageOf(error)}`,
        };
      }
    },
    emit: (effect) => {
      void announce({ type: 'observation', observation: effect.observation });
      return undefined;
    },
  };
  const performers = { ...defaults, ...options.performers?.(defaults) };

  const machine: Machine<FlowState, FlowEvent, FlowEffect> = {
    step: flow.step,
    isFinal: isFlowFinal,
    cancelled: (reason) => ({ type: 'cancelled', reason }),
    faulted: (error) => ({ type: 'faulted', error }),
  };
  let timer: NodeJS.Timeout | undefined;
  let driven: Awaited<ReturnType<typeof drive<FlowState, FlowEvent, FlowEffect>>>;
  try {
    driven = await drive(
      {
        machine,
        performers,
        ...(options.signal ? { signal: options.signal } : {}),
        announce: (item) => announce(item as FlowItem),
        quiet: (effect) => effect.type === 'emit',
        attach: (control) => {
          const afterMs = flow.config.timeoutMs;
          const spent = options.startedAt === undefined ? 0 : Math.max(0, Date.now() - options.startedAt);
          timer = setTimeout(() => void control.dispatch({ type: 'timedOut', afterMs }), Math.max(0, afterMs - spent));
        },
        ...(store || options.checkpoint
          ? {
              save: async (state: FlowState) => {
                if (store) version = await store.save(flowId, state, version);
                await options.checkpoint?.(state);
              },
            }
          : {}),
      },
      from,
      first,
    );
  } finally {
    clearTimeout(timer);
    ended = true;
    if (!options.resources) await pool.close();
  }
  const { state, fault } = driven;
  // A flow whose last state could not be saved did not end as it says: report the fault.
  const failed = fault !== undefined && state.status !== 'failed';
  const outcome: FlowOutcome = {
    status: failed ? 'failed' : state.status,
    answer: state.answer ?? state.results.join('\n'),
    usage: state.usage,
    plan: planOf(state),
    results: state.results,
    flowId,
    state,
    ...(failed ? { finishReason: 'error' as const } : state.finishReason ? { finishReason: state.finishReason } : {}),
    ...(failed ? { error: fault } : state.error ? { error: state.error } : {}),
  };
  await sink?.({ type: 'result', result: outcome });
  return outcome;
}
