import {
  type AgentConfig,
  type AgentEvent,
  type AgentState,
  defineAgent,
  type Effect,
  initialStep,
  step,
  type ToolSpec,
} from '../src/index.js';

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
    maxSteps: 5,
    tokenizer: 'estimate',
    ...overrides,
  });

export const call = (name: string, args: unknown = {}, id?: string) => ({
  id: id ?? `c_${name}_${JSON.stringify(args).length}`,
  name,
  arguments: typeof args === 'string' ? args : JSON.stringify(args),
});

export const replied = (content: string, toolCalls: ReturnType<typeof call>[] = []): AgentEvent => ({
  type: 'llmResponded',
  content,
  toolCalls,
  usage: { inputTokens: 10, outputTokens: 2 },
});

export const done = (callId: string, output = 'ok'): AgentEvent => ({ type: 'toolCompleted', callId, output });

/** Drives the reducer through a list of events, returning every intermediate result. */
export function drive(config: AgentConfig, input: string, events: AgentEvent[]) {
  let [state, effects] = initialStep(config, input);
  const trace: { state: AgentState; effects: readonly Effect[] }[] = [{ state, effects }];
  for (const event of events) {
    [state, effects] = step(config, state, event);
    trace.push({ state, effects });
  }
  return { state, effects, trace };
}

export const ofType = <T extends Effect['type']>(effects: readonly Effect[], type: T) =>
  effects.filter((e): e is Extract<Effect, { type: T }> => e.type === type);
