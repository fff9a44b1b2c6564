import { type AgentConfig, defineAgent } from '../src/kernel/agent.js';
import type { AnyEffect, Effect } from '../src/kernel/effects.js';
import type { AgentEvent } from '../src/kernel/events.js';
import type { ToolCall } from '../src/kernel/messages.js';
import { type DefaultPolicyOptions, defaultPolicies } from '../src/kernel/policies.js';
import { createStep, initialState } from '../src/kernel/reducer.js';
import type { RunError } from '../src/kernel/runError.js';
import type { AgentState } from '../src/kernel/state.js';
import type { ToolSpec } from '../src/kernel/tool.js';

const schema = (props: Record<string, unknown> = {}) => ({
  type: 'object',
  properties: props,
  additionalProperties: false,
});

export const specs = {
  echo: {
    name: 'echo',
    description: 'Echo text back',
    parameters: schema({ text: { type: 'string' } }),
    parallelSafe: true,
  },
  write: { name: 'write', description: 'Write a file', parameters: schema({ path: { type: 'string' } }) },
  terminate: {
    name: 'terminate',
    description: 'Finish',
    parameters: schema({ status: { type: 'string', enum: ['success', 'failure'] } }),
    terminal: true,
  },
  deploy: { name: 'deploy', description: 'Deploy', parameters: schema(), needsApproval: true },
  ask_human: {
    name: 'ask_human',
    description: 'Ask a person',
    parameters: schema({ inquire: { type: 'string' } }),
    human: { questionArg: 'inquire' },
  },
} satisfies Record<string, ToolSpec>;

export const testConfig = (overrides: Partial<AgentConfig> = {}): AgentConfig =>
  defineAgent({
    name: 'test',
    systemPrompt: 'You are a test agent.',
    nextStepPrompt: 'What next?',
    tools: Object.values(specs),
    tokenizer: 'estimate',
    ...overrides,
  });

/** The loop with OpenManus's policies, these settings given (by default 5 steps: tests end soon). */
export const stepWith = (options: DefaultPolicyOptions = {}) =>
  createStep(defaultPolicies({ maxSteps: 5, ...options }));

/** A step made of policies (`createStep`'s). */
type PolicyStep = ReturnType<typeof createStep>;

/** The step the helpers drive by default: the default policies, at most 5 steps. */
export const testStep = stepWith();

/** Starts a run with `step` (the test step by default): the fresh state plus its first step's effects. */
export const start = (config: AgentConfig, input: string, step: PolicyStep = testStep) =>
  step(config, initialState(), { type: 'started', input });

export const call = (name: string, args: unknown = {}, id?: string) => ({
  id: id ?? `c_${name}_${JSON.stringify(args).length}`,
  name,
  arguments: typeof args === 'string' ? args : JSON.stringify(args),
});

/** Test shorthand: events naming their tool call by `callId`, a context by `provider`, or nothing (the open model call). */
export type Shorthand =
  | AgentEvent
  | {
      type: 'llmResponded';
      content: string;
      toolCalls: readonly ToolCall[];
      usage?: { inputTokens: number; outputTokens: number };
    }
  | { type: 'llmFailed'; error: RunError }
  | ({ type: 'toolCompleted'; callId: string } & Omit<
      Extract<AgentEvent, { type: 'toolCompleted' }>,
      'type' | 'effectId'
    >)
  | { type: 'humanReplied'; callId: string; answer: string }
  | { type: 'approvalGiven'; callId: string }
  | { type: 'approvalDenied'; callId: string; reason?: string }
  | { type: 'contextGathered'; provider: string; data?: unknown; error?: RunError };

const PHASE = {
  toolCompleted: 'running',
  humanReplied: 'human',
  approvalGiven: 'approval',
  approvalDenied: 'approval',
};

/** The effect id a shorthand event answers in `state` (`none` when the state waits for no such effect). */
export function correlate(state: AgentState, event: Shorthand): AgentEvent {
  if ('effectId' in event || !('type' in event)) return event as AgentEvent;
  switch (event.type) {
    case 'llmResponded':
    case 'llmFailed':
      return { ...event, effectId: `llm-${state.requestSeq}` } as AgentEvent;
    case 'contextGathered': {
      const { provider, ...rest } = event;
      return { ...rest, effectId: `context-${state.requestSeq}-${provider}` };
    }
    case 'toolCompleted':
    case 'humanReplied':
    case 'approvalGiven':
    case 'approvalDenied': {
      const { callId, ...rest } = event;
      const index = state.turn?.calls.findIndex((c) => c.call.id === callId) ?? -1;
      const effectId = index < 0 ? 'none' : `${PHASE[event.type]}-${state.requestSeq}-${index}`;
      return { ...rest, effectId } as AgentEvent;
    }
    default:
      return event;
  }
}

/** `step` (the test step by default) with a shorthand event. */
export const on = (config: AgentConfig, state: AgentState, event: Shorthand, step: PolicyStep = testStep) =>
  step(config, state, correlate(state, event));

export const replied = (content: string, toolCalls: ReturnType<typeof call>[] = []): Shorthand => ({
  type: 'llmResponded',
  content,
  toolCalls,
  usage: { inputTokens: 10, outputTokens: 2 },
});

export const done = (callId: string, output = 'ok'): Shorthand => ({ type: 'toolCompleted', callId, output });

/** Drives `step` (the test step by default) through a list of events, returning every intermediate result. */
export function drive(config: AgentConfig, input: string, events: Shorthand[], step: PolicyStep = testStep) {
  let [state, effects] = start(config, input, step);
  const trace: { state: AgentState; effects: readonly Effect[] }[] = [{ state, effects }];
  for (const event of events) {
    [state, effects] = on(config, state, event, step);
    trace.push({ state, effects });
  }
  return { state, effects, trace };
}

export const ofType = <T extends Effect['type']>(effects: readonly AnyEffect[], type: T) =>
  effects.filter((e): e is Extract<Effect, { type: T }> => e.type === type);
