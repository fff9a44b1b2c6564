import type { Agent } from '@openmanus/core';
import type { FlowConfig, FlowEvent, FlowState, WhenBlocked } from './flowState.js';
import { type FlowTransition, flowStep } from './flowStep.js';
import { createPlanningTool } from './planningTool.js';

export interface PlanningFlowOptions {
  /**
   * The agents: one (key `default`), a list (keys `agent_0`, `agent_1`, …) or an object by key,
   * as OpenManus's flows take them. The first is the primary.
   */
  readonly agents: Agent | readonly Agent[] | Readonly<Record<string, Agent>>;
  /** The keys of the agents that take steps (default: all of them). */
  readonly executors?: readonly string[];
  /** Runs of one step before it is marked blocked, when runs fail (an error, the step limit). Default 2. */
  readonly maxAttempts?: number;
  /** After a blocked step: go on with the next (default, as OpenManus), ask the model to replan, or stop the flow. */
  readonly whenBlocked?: WhenBlocked;
  /** Replans one flow may make with `whenBlocked: 'replan'`. Default 2. */
  readonly maxReplans?: number;
  /**
   * `keep` (default, as OpenManus): an executor remembers the steps it did before, in the flow's
   * state; `clear`: every step starts from an empty history. Either way each step has a fresh step budget.
   */
  readonly executorMemory?: 'keep' | 'clear';
  /** Longest the whole flow may run, in ms (default 3,600,000: OpenManus's hour). */
  readonly timeoutMs?: number;
  /** The LLM profile for the plan and the summary. */
  readonly profile?: string;
}

/** A flow as data and its reducer; `runFlow`, `streamFlow` and `resumeFlow` run it. */
export interface PlanningFlow {
  readonly config: FlowConfig;
  /** The agents by key, the primary first. */
  readonly agents: Readonly<Record<string, Agent>>;
  readonly step: (state: FlowState, event: FlowEvent) => FlowTransition;
}

const isAgent = (value: unknown): value is Agent =>
  typeof value === 'object' &&
  value !== null &&
  Array.isArray((value as Agent).tools) &&
  typeof (value as Agent).config?.name === 'string';

function agentsByKey(agents: PlanningFlowOptions['agents']): Readonly<Record<string, Agent>> {
  if (isAgent(agents)) return { default: agents };
  if (Array.isArray(agents)) return Object.fromEntries(agents.map((agent, i) => [`agent_${i}`, agent]));
  return agents as Readonly<Record<string, Agent>>;
}

const positiveInteger = (name: string, value: number | undefined, fallback: number, least: number): number => {
  const n = value ?? fallback;
  if (!Number.isInteger(n) || n < least)
    throw new RangeError(`${name} must be an integer of at least ${least}, not ${n}`);
  return n;
};

/**
 * PlanningFlow (OpenManus's `run_flow.py`): the model makes a plan, each step goes to an executor
 * agent by its `[AGENT]` label, and the model sums up at the end.
 *
 * ```ts
 * const flow = createPlanningFlow({ agents: { manus: createManus(), data_analysis: createDataAnalysis() } });
 * const outcome = await runFlow(flow, 'Compare the rainfall of Kyoto and Osaka', { llm });
 * ```
 */
export function createPlanningFlow(options: PlanningFlowOptions): PlanningFlow {
  const agents = agentsByKey(options.agents);
  const keys = Object.keys(agents);
  if (keys.length === 0) throw new TypeError('a planning flow needs at least one agent');
  for (const key of keys) {
    if (!isAgent(agents[key]))
      throw new TypeError(`agents.${key} is not an agent (make one with createAgent or createManus)`);
  }
  const executors = options.executors ?? keys;
  const unknown = executors.filter((key) => !agents[key]);
  if (unknown.length > 0)
    throw new TypeError(`unknown executors: ${unknown.join(', ')} (the agents are ${keys.join(', ')})`);
  if (executors.length === 0) throw new TypeError('a planning flow needs at least one executor');
  const whenBlocked = options.whenBlocked ?? 'continue';
  if (!['continue', 'replan', 'stop'].includes(whenBlocked)) {
    throw new TypeError(`whenBlocked must be "continue", "replan" or "stop", not "${whenBlocked}"`);
  }
  const executorMemory = options.executorMemory ?? 'keep';
  if (executorMemory !== 'keep' && executorMemory !== 'clear') {
    throw new TypeError(`executorMemory must be "keep" or "clear", not "${executorMemory}"`);
  }
  const config: FlowConfig = {
    agents: keys.map((key) => {
      const { name, description } = (agents[key] as Agent).config;
      return { key, name, description };
    }),
    executors,
    planningTool: createPlanningTool().spec,
    maxAttempts: positiveInteger('maxAttempts', options.maxAttempts, 2, 1),
    whenBlocked,
    maxReplans: positiveInteger('maxReplans', options.maxReplans, 2, 0),
    executorMemory,
    timeoutMs: positiveInteger('timeoutMs', options.timeoutMs, 3_600_000, 1),
    ...(options.profile ? { profile: options.profile } : {}),
  };
  return { config, agents, step: (state, event) => flowStep(config, state, event) };
}
