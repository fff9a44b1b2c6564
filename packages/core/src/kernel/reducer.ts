import type { AgentConfig } from './agent.js';
import type { Effect, RunResult } from './effects.js';
import type { AgentEvent } from './events.js';
import { keepNewestImages } from './memory.js';
import { type AssistantMessage, assistantMessage, type ImageData, type Message, type ToolCall } from './messages.js';
import { buildRequest } from './request.js';
import {
  type AgentState,
  emptyUsage,
  type FinishReason,
  isFinal,
  type PendingCall,
  type RunStatus,
  SCHEMA_VERSION,
  type Turn,
  type Usage,
} from './state.js';
import { emptyStuckState, recordTurn } from './stuck.js';
import { requestTokens } from './tokens.js';
import type { ToolSpec } from './tool.js';

/**
 * The whole agent loop: think → act → observe, as a pure function of (config, state, event).
 * No clock, no randomness, no I/O: ids come from counters in the state.
 */
export type Transition = readonly [AgentState, readonly Effect[]];

/** Thrown for an event the current state cannot take (a bug in the driver, not in the run). */
export class InvalidEventError extends Error {
  override readonly name = 'InvalidEventError';
}

export function initialState(): AgentState {
  return {
    schemaVersion: SCHEMA_VERSION,
    status: 'idle',
    step: 0,
    requestSeq: 0,
    messages: [],
    taskIndex: 0,
    usage: emptyUsage,
    stuck: emptyStuckState,
    reprompted: false,
  };
}

/** Starts a run: the fresh state plus the effects of its first step. */
export function initialStep(config: AgentConfig, input: string, image?: ImageData): Transition {
  return step(config, initialState(), image ? { type: 'started', input, image } : { type: 'started', input });
}

export function step(config: AgentConfig, state: AgentState, event: AgentEvent): Transition {
  switch (event.type) {
    case 'started': {
      if (!isFinal(state) && state.status !== 'idle') {
        throw new InvalidEventError(`cannot start a new task while the run is ${state.status}`);
      }
      const task: Message = event.image
        ? { role: 'user', content: event.input, image: event.image }
        : { role: 'user', content: event.input };
      const { finishReason: _r, answer: _a, error: _e, ...rest } = state;
      const messages = state.messages.concat(task);
      return think(config, {
        ...rest,
        status: 'awaiting_llm',
        step: 0,
        messages: event.image ? keepNewestImages(messages, config.keepImages) : messages,
        taskIndex: state.messages.length,
        stuck: { turns: state.stuck.turns, calls: state.stuck.calls },
        reprompted: false,
      });
    }
    case 'resumed':
      return [state, outstandingEffects(config, state)];
    case 'cancelled': {
      if (isFinal(state)) return [state, []];
      // Calls still open are answered as cancelled, so a later message can continue the conversation.
      const { turn, ...rest } = state;
      const closed = turn ? { ...rest, messages: [...state.messages, ...observationsOf(turn.calls)] } : rest;
      return finish(closed, 'cancelled', lastAnswer(state.messages), event.reason);
    }
    case 'llmResponded':
      if (state.status !== 'awaiting_llm') return [state, []];
      return act(
        config,
        { ...state, usage: addUsage(state.usage, { inputTokens: 0, outputTokens: 0, ...event.usage, llmCalls: 1 }) },
        event.content,
        event.toolCalls,
      );
    case 'llmFailed':
      if (state.status !== 'awaiting_llm') return [state, []];
      return finish(
        {
          ...state,
          usage: { ...state.usage, llmCalls: state.usage.llmCalls + 1 },
        },
        'error',
        '',
        `the model request failed: ${event.error}`,
      );
    case 'toolCompleted': {
      const counted = event.usage ? { ...state, usage: addUsage(state.usage, event.usage) } : state;
      const [next, effects] = settle(config, counted, event.callId, 'running', (pending) =>
        answered(pending, truncate(event.output, config.maxObserve), event.isError === true, event.image),
      );
      // A stale result changes nothing, its usage included.
      return next === counted ? [state, effects] : [next, effects];
    }
    case 'humanReplied':
      return settle(config, state, event.callId, 'human', (pending) => answered(pending, event.answer, false));
    case 'approvalDenied':
      return settle(config, state, event.callId, 'approval', (pending) =>
        answered(pending, `Error: the user did not approve this call${event.reason ? `: ${event.reason}` : '.'}`, true),
      );
    case 'approvalGiven': {
      const pending = state.turn?.calls.find((c) => c.call.id === event.callId && c.phase === 'approval');
      if (!pending || !state.turn) return [state, []];
      const spec = findTool(config, pending.call.name);
      const released: PendingCall = {
        ...pending,
        phase: spec?.human ? 'human' : 'running',
      };
      const turn = replaceCall(state.turn, released);
      const index = state.turn.calls.indexOf(pending);
      return [{ ...state, turn, status: statusOf(turn) }, [dispatch(state, released, index, spec)]];
    }
    case 'contextGathered': {
      const context = state.context;
      if (state.status !== 'awaiting_context' || !context?.pending.includes(event.provider)) return [state, []];
      const gathered = { ...context.gathered, [event.provider]: event.error === undefined ? event.data : undefined };
      const pending = context.pending.filter((name) => name !== event.provider);
      const next: AgentState = { ...state, context: { pending, gathered } };
      return pending.length > 0 ? [next, []] : request(config, { ...next, status: 'awaiting_llm' });
    }
  }
}

function think(config: AgentConfig, state: AgentState): Transition {
  if (state.step >= config.maxSteps) {
    return finish(state, 'max_steps', lastAnswer(state.messages), `reached the step limit (${config.maxSteps})`);
  }
  const { context: _previous, ...rest } = state;
  const next: AgentState = { ...rest, status: 'awaiting_llm', step: state.step + 1, requestSeq: state.requestSeq + 1 };
  const wanted = (config.contextProviders ?? []).filter((provider) => provider.when(next)).map((p) => p.name);
  if (wanted.length === 0) return request(config, next);
  // Fresh context first (e.g. the browser page), then the request that uses it.
  const gathering: AgentState = { ...next, status: 'awaiting_context', context: { pending: wanted, gathered: {} } };
  return [gathering, gatherEffects(gathering)];
}

function gatherEffects(state: AgentState): Effect[] {
  return (state.context?.pending ?? []).map((provider) => ({
    type: 'gatherContext',
    id: `context-${state.requestSeq}-${provider}`,
    provider,
  }));
}

/** Emits the model request for the current step, unless it cannot fit the token budget. */
function request(config: AgentConfig, state: AgentState): Transition {
  const { request, dropped } = buildRequest(config, state);
  if (config.maxInputTokens !== undefined) {
    const needed = requestTokens(request, config.tokenizer);
    if (needed > config.maxInputTokens) {
      const explanation =
        `Stopped before step ${state.step}: the request needs ${needed} input tokens, ` +
        `more than the limit of ${config.maxInputTokens}. It was not sent.`;
      const stopped = {
        ...state,
        messages: [...state.messages, assistantMessage(explanation)],
      };
      return finish(stopped, 'token_limit', explanation, explanation);
    }
  }
  // A re-prompt for a missing tool call stays within its step: no second "step started".
  const effects: Effect[] = state.reprompted
    ? []
    : [{ type: 'emit', observation: { kind: 'stepStarted', step: state.step, maxSteps: config.maxSteps } }];
  if (state.stuck.hint)
    effects.push({
      type: 'emit',
      observation: { kind: 'stuck', hint: state.stuck.hint },
    });
  if (dropped > 0)
    effects.push({
      type: 'emit',
      observation: { kind: 'memoryTrimmed', dropped },
    });
  effects.push({ type: 'callLlm', id: `llm-${state.requestSeq}`, request });
  return [state, effects];
}

function act(config: AgentConfig, state: AgentState, content: string, rawCalls: readonly ToolCall[]): Transition {
  const ignoring = config.toolChoice === 'none' && rawCalls.length > 0;
  const calls = ignoring ? [] : withUniqueIds(rawCalls, state.requestSeq);
  const message = assistantMessage(content, calls);
  const acted: AgentState = {
    ...state,
    messages: state.messages.concat(message),
    stuck: recordTurn(config, state.stuck, message),
  };
  const notes: Effect[] = ignoring
    ? [
        {
          type: 'emit',
          observation: { kind: 'toolCallsIgnored', count: rawCalls.length },
        },
      ]
    : [];

  if (calls.length === 0) {
    if (config.toolChoice === 'required') {
      if (!state.reprompted) {
        const [next, effects] = request(config, {
          ...acted,
          reprompted: true,
          requestSeq: state.requestSeq + 1,
        });
        return [next, [...notes, ...effects]];
      }
      return finish(
        acted,
        'error',
        content,
        'tool_choice is "required" but the model answered twice without a tool call',
      );
    }
    if (config.finishOnText && content.trim() !== '') {
      const [next, effects] = finish(acted, 'answered', content);
      return [next, [...notes, ...effects]];
    }
    const [next, effects] = think(config, { ...acted, reprompted: false });
    return [next, [...notes, ...effects]];
  }

  const pendings = calls.map((call) => admit(config, call));
  const turn: Turn = { calls: pendings };
  const opened: AgentState = {
    ...acted,
    reprompted: false,
    turn,
    status: statusOf(turn),
  };
  const effects = pendings.flatMap((pending, index) =>
    pending.phase === 'done' ? [] : [dispatch(opened, pending, index, findTool(config, pending.call.name))],
  );
  if (effects.length === 0) return endStep(config, opened);
  return [opened, effects];
}

/** Validates a call's name and JSON; a bad one is answered at once with an error the model sees. */
function admit(config: AgentConfig, call: ToolCall): PendingCall {
  const spec = findTool(config, call.name);
  if (!spec) {
    const known = config.tools.map((t) => t.name).join(', ') || 'none';
    return answered(
      { call, phase: 'done', args: undefined },
      `Error: unknown tool '${call.name}'. Available tools: ${known}.`,
      true,
    );
  }
  let args: unknown;
  try {
    args = JSON.parse(call.arguments.trim() === '' ? '{}' : call.arguments);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return answered(
      { call, phase: 'done', args: undefined },
      `Error: the arguments for ${call.name} are not valid JSON (${reason}). Send one JSON object.`,
      true,
    );
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return answered(
      { call, phase: 'done', args },
      `Error: the arguments for ${call.name} must be a JSON object.`,
      true,
    );
  }
  const phase = spec.needsApproval ? 'approval' : spec.human ? 'human' : 'running';
  return { call, phase, args };
}

function dispatch(state: AgentState, pending: PendingCall, index: number, spec: ToolSpec | undefined): Effect {
  const id = `${pending.phase}-${state.requestSeq}-${index}`;
  if (pending.phase === 'approval')
    return {
      type: 'requestApproval',
      id,
      call: pending.call,
      args: pending.args,
    };
  if (pending.phase === 'human') {
    const field = spec?.human?.questionArg ?? 'question';
    const question = (pending.args as Record<string, unknown>)[field];
    return {
      type: 'askHuman',
      id,
      callId: pending.call.id,
      question: typeof question === 'string' ? question : JSON.stringify(pending.args),
    };
  }
  return {
    type: 'callTool',
    id,
    call: pending.call,
    args: pending.args,
    parallelSafe: spec?.parallelSafe === true,
    ...(spec?.timeoutMs !== undefined ? { timeoutMs: spec.timeoutMs } : {}),
  };
}

/** Answers one pending call; when it was the last, the step ends. Stale or unknown ids are ignored. */
function settle(
  config: AgentConfig,
  state: AgentState,
  callId: string,
  phase: PendingCall['phase'],
  answer: (pending: PendingCall) => PendingCall,
): Transition {
  const pending = state.turn?.calls.find((c) => c.call.id === callId && c.phase === phase);
  if (!pending || !state.turn || isFinal(state)) return [state, []];
  const turn = replaceCall(state.turn, answer(pending));
  if (turn.calls.some((c) => c.phase !== 'done')) return [{ ...state, turn, status: statusOf(turn) }, []];
  return endStep(config, { ...state, turn });
}

/** One tool message per call, in call order; a call that never answered says it was cancelled. */
function observationsOf(calls: readonly PendingCall[]): Message[] {
  return calls.map((c) => ({
    role: 'tool',
    content: c.phase === 'done' ? (c.output ?? '') : 'Error: cancelled before it finished.',
    toolCallId: c.call.id,
    name: c.call.name,
    ...(c.image ? { image: c.image } : {}),
  }));
}

/** Every call has answered: observations go into memory, then the next step. */
function endStep(config: AgentConfig, state: AgentState): Transition {
  const { turn, ...rest } = state;
  const calls = turn?.calls ?? [];
  const observations = observationsOf(calls);
  const messages = state.messages.concat(observations);
  const observed: AgentState = {
    ...rest,
    messages: observations.some((m) => 'image' in m) ? keepNewestImages(messages, config.keepImages) : messages,
  };
  const terminal = calls.find((c) => !c.isError && findTool(config, c.call.name)?.terminal);
  if (terminal) return finish(observed, 'terminated', lastAnswer(state.messages) || (terminal.output ?? ''));
  return think(config, observed);
}

function finish(state: AgentState, reason: FinishReason, answer: string, error?: string): Transition {
  const next: AgentState = {
    ...state,
    status: reason === 'error' ? 'failed' : 'finished',
    finishReason: reason,
    answer,
    ...(error && reason !== 'answered' && reason !== 'terminated' ? { error } : {}),
  };
  return [next, [{ type: 'finish', result: resultOf(next) }]];
}

function resultOf(state: AgentState): RunResult {
  return {
    finishReason: state.finishReason ?? 'error',
    answer: state.answer ?? '',
    usage: state.usage,
    ...(state.error ? { error: state.error } : {}),
  };
}

/** The effects a state is waiting on: what a resumed run must (re)do. */
function outstandingEffects(config: AgentConfig, state: AgentState): Effect[] {
  if (state.status === 'awaiting_context') return gatherEffects(state);
  if (state.status === 'awaiting_llm') {
    return [
      {
        type: 'callLlm',
        id: `llm-${state.requestSeq}`,
        request: buildRequest(config, state).request,
      },
    ];
  }
  if (isFinal(state)) return [{ type: 'finish', result: resultOf(state) }];
  const calls = state.turn?.calls ?? [];
  return calls.flatMap((pending, index) =>
    pending.phase === 'done' ? [] : [dispatch(state, pending, index, findTool(config, pending.call.name))],
  );
}

function addUsage(usage: Usage, more: Usage): Usage {
  return {
    inputTokens: usage.inputTokens + more.inputTokens,
    outputTokens: usage.outputTokens + more.outputTokens,
    llmCalls: usage.llmCalls + more.llmCalls,
  };
}

function answered(pending: PendingCall, output: string, isError: boolean, image?: ImageData): PendingCall {
  return {
    call: pending.call,
    args: pending.args,
    phase: 'done',
    output,
    ...(isError ? { isError } : {}),
    ...(image ? { image } : {}),
  };
}

function replaceCall(turn: Turn, updated: PendingCall): Turn {
  return {
    calls: turn.calls.map((c) => (c.call.id === updated.call.id ? updated : c)),
  };
}

function statusOf(turn: Turn): RunStatus {
  if (turn.calls.some((c) => c.phase === 'approval')) return 'awaiting_approval';
  if (turn.calls.some((c) => c.phase === 'human')) return 'awaiting_human';
  return 'awaiting_tools';
}

const toolIndex = new WeakMap<readonly ToolSpec[], ReadonlyMap<string, ToolSpec>>();

function findTool(config: AgentConfig, name: string): ToolSpec | undefined {
  let index = toolIndex.get(config.tools);
  if (!index) {
    index = new Map(config.tools.map((t) => [t.name, t]));
    toolIndex.set(config.tools, index);
  }
  return index.get(name);
}

/** Models sometimes omit or repeat call ids; every call of a turn needs its own. */
function withUniqueIds(calls: readonly ToolCall[], requestSeq: number): ToolCall[] {
  const seen = new Set<string>();
  return calls.map((call, i) => {
    const id = call.id && !seen.has(call.id) ? call.id : `call_${requestSeq}_${i}`;
    seen.add(id);
    return id === call.id ? call : { ...call, id };
  });
}

function truncate(output: string, max: number | undefined): string {
  if (max === undefined || output.length <= max) return output;
  return `${output.slice(0, max)}\n…[observation truncated: ${output.length - max} more characters]`;
}

function lastAnswer(messages: readonly Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role === 'assistant' && message.content.trim() !== '') return (message as AssistantMessage).content;
    if (message?.role === 'user') return '';
  }
  return '';
}
