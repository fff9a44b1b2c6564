/**
 * PlanningFlow's whole loop as a pure reducer: `flowStep(config, state, event) → [state, effects]`.
 * Make the plan (the model, with the planning tool), take the first open step, route it to an
 * executor by its `[AGENT]` label, judge the run's outcome (completed, retried, blocked), maybe
 * replan, and close with a summary. No I/O: the shell (runFlow.ts) performs the effects.
 */
import {
  type AgentState,
  addUsage,
  emptyUsage,
  err,
  hasErrorCode,
  isFinal,
  OpenManusError,
  ok,
  type Result,
  type RunError,
  type ToolCall,
} from '@openmanus/core/kernel';
import {
  agentSummaryPrompt,
  fallbackPlan,
  planRequest,
  replanRequest,
  stepPrompt,
  summaryRequest,
} from './flowPrompts.js';
import {
  type AgentReport,
  FLOW_SCHEMA_VERSION,
  type FlowConfig,
  type FlowEffect,
  type FlowEvent,
  type FlowFinishReason,
  type FlowObservation,
  type FlowState,
  type FlowWork,
  isFlowFinal,
} from './flowState.js';
import {
  applyPlanning,
  type Plan,
  type PlanBook,
  type PlanningCommand,
  planningParameters,
  type StepStatus,
} from './plans.js';

export type FlowTransition = readonly [FlowState, readonly FlowEffect[]];

/** An event the flow cannot take in the state it is in (a start of a flow already started). */
export class InvalidFlowEventError extends OpenManusError<'INVALID_FLOW_EVENT'> {
  static readonly codes = ['INVALID_FLOW_EVENT'] as const;
  override readonly name = 'InvalidFlowEventError';
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super('INVALID_FLOW_EVENT', message, options);
  }
  static override isInstance(value: unknown): value is InvalidFlowEventError {
    return hasErrorCode(value, InvalidFlowEventError.codes);
  }
}

export function initialFlowState(): FlowState {
  return {
    kind: 'planningFlow',
    schemaVersion: FLOW_SCHEMA_VERSION,
    status: 'idle',
    input: '',
    planId: '',
    plans: { plans: {} },
    seq: 0,
    results: [],
    memory: {},
    replans: 0,
    usage: emptyUsage,
  };
}

export function flowStep(config: FlowConfig, state: FlowState, event: FlowEvent): FlowTransition {
  switch (event.type) {
    case 'started': {
      if (state.status !== 'idle') throw new InvalidFlowEventError(`a flow starts once; this one is ${state.status}`);
      const started: FlowState = {
        ...state,
        ...(event.flowId ? { flowId: event.flowId } : {}),
        status: 'planning',
        input: event.input,
        planId: event.planId,
      };
      return issue(config, started, (seq) => ({
        type: 'callLlm',
        id: `plan-${seq}`,
        purpose: 'plan',
        request: planRequest(config, event.input, event.planId),
      }));
    }
    case 'resumed': {
      if (isFlowFinal(state)) return [state, []];
      const named = event.flowId && !state.flowId ? { ...state, flowId: event.flowId } : state;
      // What the flow waited for is done again (a step interrupted midway runs again from its start).
      if (!named.awaiting) throw new InvalidFlowEventError(`nothing to resume: the flow is ${state.status}`);
      return [named, [effectOf(config, named, named.awaiting)]];
    }
    case 'llmResponded':
    case 'llmFailed': {
      const work = state.awaiting;
      // An answer to anything but what the flow waits for (late, repeated, cancelled) changes nothing.
      if (isFlowFinal(state) || work?.type !== 'callLlm' || work.id !== event.effectId) return [state, []];
      const usage =
        event.type === 'llmResponded'
          ? addUsage(state.usage, { inputTokens: 0, outputTokens: 0, ...event.usage, llmCalls: 1 })
          : addUsage(state.usage, { ...emptyUsage, llmCalls: 1 });
      const answered = { ...settled(state), usage };
      if (work.purpose === 'plan') return planned(config, answered, event);
      if (work.purpose === 'replan') return replanned(config, answered, event);
      const summary = event.type === 'llmResponded' ? event.content.trim() : '';
      if (summary) return finish(answered, 'completed', { answer: `Plan completed:\n\n${summary}` });
      // OpenManus's fallback: the primary agent writes the summary.
      const primary = config.agents[0]?.key ?? '';
      return issue(config, { ...answered, status: 'summarising' }, (seq) => ({
        type: 'runAgent',
        id: `summary-${seq}`,
        executor: primary,
        prompt: agentSummaryPrompt(planOf(answered), answered.results),
      }));
    }
    case 'agentFinished':
    case 'agentFailed': {
      const work = state.awaiting;
      if (isFlowFinal(state) || work?.type !== 'runAgent' || work.id !== event.effectId) return [state, []];
      const report = event.type === 'agentFinished' ? event.report : undefined;
      const remembered = report ? remember(config, settled(state), work.executor, report) : settled(state);
      const verdict: Verdict = report
        ? verdictOf(report)
        : { kind: 'failed', reason: (event.type === 'agentFailed' && event.error) || 'the executor could not be run' };
      if (work.stepIndex === undefined) {
        const answer =
          verdict.kind === 'done'
            ? `Plan completed:\n\n${verdict.answer}`
            : 'Plan completed. Error generating summary.';
        return finish(remembered, 'completed', { answer });
      }
      return judged(config, remembered, work.stepIndex, verdict);
    }
    case 'timedOut':
      return finish(state, 'timeout', {
        error: { code: 'FLOW_TIMEOUT', message: `the flow ran out of time (${event.afterMs / 1000} s)` },
      });
    case 'cancelled':
      return finish(state, 'cancelled', { error: { code: 'CANCELLED', message: event.reason } });
    case 'faulted':
      return finish(state, 'error', { error: event.error });
  }
}

/** How one run of a step ended, for the flow: done, failed (worth another try), or given up by the executor. */
export type Verdict =
  | { readonly kind: 'done'; readonly answer: string }
  | { readonly kind: 'failed'; readonly reason: string }
  | { readonly kind: 'gaveUp'; readonly reason: string };

/**
 * A step is done when its run answered or terminated with success; an executor terminating with
 * `failure` gave up; an error, the step limit or the token budget is a failed attempt.
 */
export function verdictOf(report: AgentReport): Verdict {
  if (report.status === 'finished' && (report.finishReason === 'answered' || report.finishReason === 'terminated')) {
    if (report.finishReason === 'terminated' && terminatedWithFailure(report.state)) {
      return { kind: 'gaveUp', reason: report.answer.trim() || 'the executor ended its task with status failure' };
    }
    return { kind: 'done', answer: report.answer.trim() || '(the step ended without an answer)' };
  }
  if (report.status === 'finished' || report.status === 'failed') {
    const why = report.error?.message ?? `the run ended (${report.finishReason ?? report.status})`;
    return { kind: 'failed', reason: why };
  }
  return {
    kind: 'failed',
    reason: `the executor is waiting for a person (${report.status}) and the flow cannot ask one`,
  };
}

/** Did the run's last terminate call (in its current task) say `failure`? */
function terminatedWithFailure(state: AgentState): boolean {
  for (let i = state.messages.length - 1; i >= state.taskIndex; i--) {
    const message = state.messages[i];
    if (message?.role !== 'assistant') continue;
    const call = message.toolCalls?.findLast((c) => c.name === 'terminate');
    if (call) return statusOf(call) === 'failure';
  }
  return false;
}

function statusOf(call: ToolCall): unknown {
  try {
    return (JSON.parse(call.arguments) as { status?: unknown } | null)?.status;
  } catch {
    return undefined;
  }
}

/**
 * The executor for a step: the agent its `[LABEL]` names (any case), else the first executor,
 * else the primary agent.
 */
export function routeStep(config: FlowConfig, text: string): string {
  // Any key the planner is told to use: a list's `agent_0`, `agent_1`, or an object's keys (`web-search`).
  const label = /\[([\w-]+)\]/.exec(text)?.[1]?.toLowerCase();
  const named = label ? config.agents.find((agent) => agent.key.toLowerCase() === label) : undefined;
  return named?.key ?? config.executors[0] ?? config.agents[0]?.key ?? '';
}

/** The flow's plan: the one it asked the model to make. */
export function planOf(state: FlowState): Plan {
  return state.plans.plans[state.planId] ?? { id: state.planId, title: '', steps: [] };
}

/** The plan from the model's answer, or OpenManus's default plan (with why) when the answer holds none. */
function planned(config: FlowConfig, state: FlowState, event: FlowEvent): FlowTransition {
  if (event.type === 'llmFailed') {
    return finish(state, 'error', {
      error: { ...event.error, message: `could not make a plan: ${event.error.message}` },
    });
  }
  if (event.type !== 'llmResponded') return [state, []];
  const made = applyPlanningCall(state.plans, state.planId, event.toolCalls, 'create');
  if (made.isOk()) return nextStep(config, { ...state, plans: made.value });
  const plan = fallbackPlan(state.planId, state.input);
  const plans: PlanBook = { plans: { ...state.plans.plans, [plan.id]: plan }, active: plan.id };
  return nextStep(config, { ...state, plans }, [{ kind: 'planFallback', reason: made.error }]);
}

/** The changed plan from the model's answer; the plan as it was (with why) when the answer holds no usable change. */
function replanned(config: FlowConfig, state: FlowState, event: FlowEvent): FlowTransition {
  const { blocked: _done, ...rest } = state;
  if (event.type !== 'llmResponded') {
    const reason = `the replanning request failed: ${event.type === 'llmFailed' ? event.error.message : ''}`;
    return nextStep(config, rest, [{ kind: 'planKept', reason }]);
  }
  const changed = applyPlanningCall(state.plans, state.planId, event.toolCalls, 'update');
  if (changed.isOk()) return nextStep(config, { ...rest, plans: changed.value });
  return nextStep(config, rest, [{ kind: 'planKept', reason: changed.error }]);
}

/**
 * The first usable planning call of a model answer, applied to the flow's plan: its id is forced
 * (the model cannot touch another plan), and it must `create` a plan (planning) or change it
 * (replanning, where a `create` counts as an update). Unparsable and other calls are skipped.
 */
function applyPlanningCall(
  book: PlanBook,
  planId: string,
  calls: readonly ToolCall[],
  wanted: 'create' | 'update',
): Result<PlanBook, string> {
  const problems: string[] = [];
  for (const call of calls) {
    if (call.name !== 'planning') {
      problems.push(`the model called "${call.name}" instead of the planning tool`);
      continue;
    }
    const parsed = parsePlanningArguments(call.arguments);
    if (!parsed.isOk()) {
      problems.push(parsed.error);
      continue;
    }
    if (parsed.value.command !== 'create' && parsed.value.command !== 'update') {
      problems.push(`the model asked the planning tool to "${parsed.value.command}" instead of "${wanted}"`);
      continue;
    }
    const applied = applyPlanning(book, { ...parsed.value, command: wanted, plan_id: planId });
    if (applied.isOk()) return ok(applied.value.book);
    problems.push(`the plan was refused: ${applied.error}`);
  }
  return err(problems.length > 0 ? problems.join('; ') : 'the model did not call the planning tool');
}

function parsePlanningArguments(json: string): Result<PlanningCommand, string> {
  let value: unknown;
  try {
    value = JSON.parse(json || '{}');
  } catch {
    return err(`the planning call's arguments are not JSON: ${json.slice(0, 200)}`);
  }
  const parsed = planningParameters.safeParse(value);
  if (parsed.success) return ok(parsed.data);
  const issue = parsed.error.issues[0];
  return err(
    `the planning call's arguments are invalid: ${issue?.path.join('.') || 'arguments'}: ${issue?.message ?? ''}`,
  );
}

/** Takes the first step not started or in progress, or, when none is left, asks for the summary. */
function nextStep(config: FlowConfig, state: FlowState, notes: readonly FlowObservation[] = []): FlowTransition {
  const emitted = notes.map((observation): FlowEffect => ({ type: 'emit', observation }));
  const plan = planOf(state);
  const index = plan.steps.findIndex((step) => step.status === 'not_started' || step.status === 'in_progress');
  const { current: _previous, ...rest } = state;
  if (index < 0) {
    const [next, effects] = issue(config, { ...rest, status: 'summarising' }, (seq) => ({
      type: 'callLlm',
      id: `summary-${seq}`,
      purpose: 'summary',
      request: summaryRequest(config, plan, state.results),
    }));
    return [next, [...emitted, ...effects]];
  }
  const text = plan.steps[index]?.text ?? '';
  const executor = routeStep(config, text);
  const marked = withStep(rest, index, 'in_progress');
  const [next, effects] = issue(
    config,
    { ...marked, status: 'running', current: { index, executor, attempt: 1 } },
    (seq) => ({
      type: 'runAgent',
      id: `step-${seq}`,
      executor,
      prompt: stepPrompt(planOf(marked), index),
      stepIndex: index,
    }),
  );
  return [next, [...emitted, ...effects]];
}

/** The step's fate from its run: completed, another attempt, or blocked. */
function judged(config: FlowConfig, state: FlowState, index: number, verdict: Verdict): FlowTransition {
  if (verdict.kind === 'done') {
    const done = withStep(state, index, 'completed');
    return nextStep(config, { ...done, results: [...done.results, verdict.answer] });
  }
  const attempt = state.current?.attempt ?? 1;
  const executor = state.current?.executor ?? routeStep(config, planOf(state).steps[index]?.text ?? '');
  if (verdict.kind === 'failed' && attempt < config.maxAttempts) {
    const retried = { ...state, current: { index, executor, attempt: attempt + 1, failure: verdict.reason } };
    const [next, effects] = issue(config, retried, (seq) => ({
      type: 'runAgent',
      id: `step-${seq}`,
      executor,
      prompt: stepPrompt(planOf(state), index, verdict.reason),
      stepIndex: index,
    }));
    const note: FlowEffect = {
      type: 'emit',
      observation: { kind: 'stepRetried', index, attempt: attempt + 1, reason: verdict.reason },
    };
    return [next, [note, ...effects]];
  }
  return blocked(config, state, index, verdict.reason);
}

/** A step that cannot be done: marked blocked with the reason, then the flow goes on, replans or stops. */
function blocked(config: FlowConfig, state: FlowState, index: number, reason: string): FlowTransition {
  const marked = withStep(state, index, 'blocked', reason);
  const { current: _previous, ...rest } = {
    ...marked,
    results: [...marked.results, `Step ${index} blocked: ${reason}`],
  };
  const note: FlowEffect = { type: 'emit', observation: { kind: 'stepBlocked', index, reason } };
  if (config.whenBlocked === 'stop') {
    const text = planOf(state).steps[index]?.text ?? '';
    const [next, effects] = finish(rest, 'stopped', {
      error: { code: 'STEP_BLOCKED', message: `step ${index} ("${text}") is blocked: ${reason}` },
    });
    return [next, [note, ...effects]];
  }
  if (config.whenBlocked === 'replan' && state.replans < config.maxReplans) {
    const replanning: FlowState = {
      ...rest,
      status: 'replanning',
      replans: state.replans + 1,
      blocked: { index, reason },
    };
    const [next, effects] = issue(config, replanning, (seq) => ({
      type: 'callLlm',
      id: `replan-${seq}`,
      purpose: 'replan',
      request: replanRequest(config, state.input, planOf(replanning), { index, reason }),
    }));
    return [next, [note, ...effects]];
  }
  const [next, effects] = nextStep(config, rest);
  return [next, [note, ...effects]];
}

function withStep(state: FlowState, index: number, status: StepStatus, notes?: string): FlowState {
  const plan = planOf(state);
  const steps = plan.steps.map((step, i) => (i === index ? { ...step, status, ...(notes ? { notes } : {}) } : step));
  return { ...state, plans: { ...state.plans, plans: { ...state.plans.plans, [plan.id]: { ...plan, steps } } } };
}

/**
 * The executor's run counted in the flow's usage, and its state kept as its memory when the flow
 * keeps memory — only a run that ended: a new task cannot start on a paused one (core refuses it).
 */
function remember(config: FlowConfig, state: FlowState, executor: string, report: AgentReport): FlowState {
  const usage = addUsage(state.usage, report.usage);
  if (config.executorMemory !== 'keep' || !isFinal(report.state)) return { ...state, usage };
  return { ...state, usage, memory: { ...state.memory, [executor]: report.state } };
}

/** Records the work the flow now waits for (its id from the next sequence number) and asks for it. */
function issue(config: FlowConfig, state: FlowState, make: (seq: number) => FlowWork): FlowTransition {
  const seq = state.seq + 1;
  const work = make(seq);
  const next: FlowState = { ...state, seq, awaiting: work };
  return [next, [effectOf(config, next, work)]];
}

/** The effect for a piece of work: an executor's run carries its memory when the flow keeps it. */
function effectOf(config: FlowConfig, state: FlowState, work: FlowWork): FlowEffect {
  if (work.type !== 'runAgent' || config.executorMemory !== 'keep') return work;
  const memory = state.memory[work.executor];
  return memory ? { ...work, state: memory } : work;
}

/** The flow's state once its awaited work has answered. */
function settled(state: FlowState): FlowState {
  const { awaiting: _answered, ...rest } = state;
  return rest;
}

function finish(
  state: FlowState,
  reason: FlowFinishReason,
  { answer, error }: { readonly answer?: string; readonly error?: RunError },
): FlowTransition {
  if (isFlowFinal(state)) return [state, []];
  const { awaiting: _dropped, ...rest } = state;
  const next: FlowState = {
    ...rest,
    status: reason === 'error' ? 'failed' : 'finished',
    finishReason: reason,
    answer: answer ?? state.results.join('\n'),
    ...(error ? { error } : {}),
  };
  return [next, []];
}
