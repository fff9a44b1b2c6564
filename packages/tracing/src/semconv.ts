/**
 * The attribute keys of OpenTelemetry's GenAI semantic conventions this package sets (in
 * Development status upstream, so named in one place), and OpenManus's own beside them.
 */
export const GEN_AI = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  agentName: 'gen_ai.agent.name',
  agentDescription: 'gen_ai.agent.description',
  conversationId: 'gen_ai.conversation.id',
  requestModel: 'gen_ai.request.model',
  responseFinishReasons: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  // Parts of the input and output tokens, as the provider reports them.
  cacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  cacheCreationInputTokens: 'gen_ai.usage.cache_creation.input_tokens',
  reasoningOutputTokens: 'gen_ai.usage.reasoning.output_tokens',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  // Opt-in: message text, only with `captureContent`.
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  systemInstructions: 'gen_ai.system_instructions',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  toolCallResult: 'gen_ai.tool.call.result',
} as const;

export const ERROR_TYPE = 'error.type';

export const OPENMANUS = {
  runId: 'openmanus.run.id',
  runStatus: 'openmanus.run.status',
  finishReason: 'openmanus.run.finish_reason',
  llmCalls: 'openmanus.usage.llm_calls',
  // The conventions define no cost: ours, in USD, set only when known.
  costUsd: 'openmanus.usage.cost_usd',
  stepNumber: 'openmanus.step.number',
  stepMax: 'openmanus.step.max',
  effectId: 'openmanus.effect.id',
  toolSuspended: 'openmanus.tool.suspended',
  // On `openmanus.wait`: what the paused run waited for, and the event that resumed it.
  waitFor: 'openmanus.wait.for',
  waitResumedBy: 'openmanus.wait.resumed_by',
} as const;

/** `gen_ai.operation.name` values used here. */
export type GenAiOperation = 'invoke_agent' | 'chat' | 'execute_tool';
