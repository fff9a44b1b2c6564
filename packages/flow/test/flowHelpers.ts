// Test helpers for the flow's reducer: events answering what the flow awaits, and executor
// reports from real runs of core's reducer (scripted only in what the model says).
import {
  type Agent,
  type AgentState,
  type AnyEvent,
  askHuman,
  createAgent,
  defaultPolicies,
  type Effect,
  isFinal,
  step,
  type ToolCall,
  terminate,
  type Usage,
} from '@openmanus/core';
import { initialState, usageSince } from '@openmanus/core/kernel';
import type { AgentReport, FlowEffect, FlowEvent, FlowState, FlowWork } from '../src/flowState.js';
import { initialFlowState } from '../src/flowStep.js';
import type { PlanningFlow } from '../src/planningFlow.js';

export const PLAN_ID = 'plan_1';
export const noUsage: Usage = { inputTokens: 0, outputTokens: 0, llmCalls: 0 };

/** An executor agent: it may terminate or ask a person; `limits` sets its step or token budget. */
export const executor = (name: string, description = '', limits: { maxSteps?: number; maxInputTokens?: number } = {}) =>
  createAgent({
    name,
    description,
    tools: [terminate, askHuman],
    tokenizer: 'estimate',
    policies: defaultPolicies({ maxSteps: 2, ...limits }),
  });

/** What the model says on one turn of an executor's run: text and tool calls, or a failed request. */
export type Reply =
  | { readonly text: string; readonly calls?: readonly { readonly name: string; readonly args: unknown }[] }
  | { readonly error: string };

export const says = (text: string): Reply => ({ text });
export const terminates = (status: 'success' | 'failure', text = ''): Reply => ({
  text,
  calls: [{ name: 'terminate', args: { status } }],
});
export const asks = (question: string): Reply => ({
  text: '',
  calls: [{ name: 'ask_human', args: { inquire: question } }],
});
/** A turn calling a tool the executor does not have: the run goes on (and runs out of steps). */
export const flails = (n: number): Reply => ({ text: '', calls: [{ name: 'search', args: { n } }] });

/**
 * Runs core's reducer for one executor task, the model answering from `replies` and every tool
 * call completing, until the run ends or pauses; the report as the flow's shell makes it.
 */
export function executorRun(agent: Agent, prompt: string, replies: readonly Reply[], from?: AgentState): AgentReport {
  const reduce = (state: AgentState, event: AnyEvent) => (agent.step ?? step)(agent.config, state, event);
  let [state, effects] = reduce(from ?? initialState(), { type: 'started', input: prompt });
  let turn = 0;
  while (!isFinal(state) && state.status !== 'awaiting_human' && state.status !== 'awaiting_approval') {
    const llm = effects.find((e): e is Extract<Effect, { type: 'callLlm' }> => e.type === 'callLlm');
    const tools = effects.filter((e): e is Extract<Effect, { type: 'callTool' }> => e.type === 'callTool');
    if (llm) {
      const reply = replies[turn];
      if (!reply) throw new Error(`the script has no reply for turn ${turn + 1}`);
      const toolCalls: ToolCall[] =
        'error' in reply
          ? []
          : (reply.calls ?? []).map((c, i) => ({
              id: `call_${turn}_${i}`,
              name: c.name,
              arguments: JSON.stringify(c.args),
            }));
      turn++;
      [state, effects] =
        'error' in reply
          ? reduce(state, { type: 'llmFailed', effectId: llm.id, error: { code: 'LLM_SERVER', message: reply.error } })
          : reduce(state, {
              type: 'llmResponded',
              effectId: llm.id,
              content: reply.text,
              toolCalls,
              usage: { inputTokens: 100, outputTokens: 10 },
            });
    } else if (tools.length > 0) {
      let next: readonly Effect[] = [];
      for (const tool of tools) {
        const [after, more] = reduce(state, { type: 'toolCompleted', effectId: tool.id, output: 'ok' });
        state = after;
        next = [...next, ...(more as Effect[])];
      }
      effects = next;
    } else {
      throw new Error(`the run is ${state.status} and waits for nothing the script answers`);
    }
  }
  return {
    status: state.status,
    answer: state.answer ?? '',
    state,
    usage: usageSince(state.usage, from?.usage ?? noUsage),
    ...(state.finishReason ? { finishReason: state.finishReason } : {}),
    ...(state.error ? { error: state.error } : {}),
  };
}

/** The one work effect (model call or executor run) of a transition. */
export function workOf(effects: readonly FlowEffect[]): Exclude<FlowEffect, { type: 'emit' }> {
  const work = effects.filter((e) => e.type !== 'emit');
  if (work.length !== 1) throw new Error(`expected one work effect, got ${JSON.stringify(work.map((e) => e.type))}`);
  return work[0] as Exclude<FlowEffect, { type: 'emit' }>;
}

export const observations = (effects: readonly FlowEffect[]) =>
  effects.flatMap((e) => (e.type === 'emit' ? [e.observation] : []));

export const planning = (args: unknown, id = 'p1'): ToolCall => ({
  id,
  name: 'planning',
  arguments: typeof args === 'string' ? args : JSON.stringify(args),
});
export const create = (steps: readonly string[], planId = PLAN_ID, title = 'The plan') =>
  planning({ command: 'create', plan_id: planId, title, steps });

/** The flow's reducer from its start, the awaited effect answered by each event in turn. */
export class FlowDriver {
  state: FlowState = initialFlowState();
  effects: readonly FlowEffect[] = [];
  constructor(readonly flow: PlanningFlow) {}

  on(event: FlowEvent): this {
    [this.state, this.effects] = this.flow.step(this.state, event);
    return this;
  }
  start(input = 'Compare the rainfall of Kyoto and Osaka', planId = PLAN_ID): this {
    return this.on({ type: 'started', input, planId });
  }
  get awaiting(): FlowWork {
    if (!this.state.awaiting) throw new Error(`the flow awaits nothing: it is ${this.state.status}`);
    return this.state.awaiting;
  }
  respond(content: string, toolCalls: readonly ToolCall[] = [], usage?: { inputTokens: number; outputTokens: number }) {
    return this.on({
      type: 'llmResponded',
      effectId: this.awaiting.id,
      content,
      toolCalls,
      ...(usage ? { usage } : {}),
    });
  }
  llmFails(message = 'HTTP 503') {
    return this.on({ type: 'llmFailed', effectId: this.awaiting.id, error: { code: 'LLM_OVERLOADED', message } });
  }
  /** Makes the plan: started, then the model creates it. */
  plan(steps: readonly string[], input?: string): this {
    return this.start(input).respond('', [create(steps)]);
  }
  /** Runs the awaited executor, with the memory its effect carries, against the model's replies. */
  run(...replies: Reply[]): this {
    const effect = workOf(this.effects);
    if (effect.type !== 'runAgent' || effect.id !== this.awaiting.id) throw new Error('the flow awaits no run');
    const agent = this.flow.agents[effect.executor];
    if (!agent) throw new Error(`no agent ${effect.executor}`);
    return this.report(executorRun(agent, effect.prompt, replies, effect.state));
  }
  report(report: AgentReport): this {
    return this.on({ type: 'agentFinished', effectId: this.awaiting.id, report });
  }
  runFails(error = 'the run could not start') {
    return this.on({ type: 'agentFailed', effectId: this.awaiting.id, error });
  }
  get steps() {
    return this.state.plans.plans[this.state.planId]?.steps ?? [];
  }
}
