import { type AgentState, InvalidStateError, messageOf, restore } from '@openmanus/core';
import { z } from 'zod';
import { FLOW_SCHEMA_VERSION, type FlowState } from './flowState.js';
import { STEP_STATUSES } from './plans.js';

const usage = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  llmCalls: z.number(),
  // Absent in flows saved before the cache and cost were counted.
  cachedInputTokens: z.number().optional(),
  cacheWriteTokens: z.number().optional(),
  reasoningTokens: z.number().optional(),
  costUsd: z.number().nonnegative().nullable().optional(),
});
const plan = z.object({
  id: z.string(),
  title: z.string(),
  steps: z.array(z.object({ text: z.string(), status: z.enum(STEP_STATUSES), notes: z.string() })),
});
// The requests the reducer made itself: checked for shape, their messages for role and content.
const request = z.object({
  messages: z.array(z.looseObject({ role: z.enum(['system', 'user', 'assistant', 'tool']), content: z.string() })),
  tools: z.array(z.looseObject({ name: z.string() })),
  toolChoice: z.enum(['auto', 'required', 'none']),
  profile: z.string().optional(),
});
const work = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('callLlm'),
    id: z.string(),
    purpose: z.enum(['plan', 'replan', 'summary']),
    request,
  }),
  z.object({
    type: z.literal('runAgent'),
    id: z.string(),
    executor: z.string(),
    prompt: z.string(),
    stepIndex: z.number().int().nonnegative().optional(),
  }),
]);

const flowState = z.strictObject({
  kind: z.literal('planningFlow'),
  schemaVersion: z.literal(FLOW_SCHEMA_VERSION),
  flowId: z.string().optional(),
  status: z.enum(['idle', 'planning', 'running', 'replanning', 'summarising', 'finished', 'failed']),
  input: z.string(),
  planId: z.string(),
  plans: z.object({ plans: z.record(z.string(), plan), active: z.string().optional() }),
  seq: z.number().int().nonnegative(),
  awaiting: work.optional(),
  current: z
    .object({
      index: z.number().int().nonnegative(),
      executor: z.string(),
      attempt: z.number().int().positive(),
      failure: z.string().optional(),
    })
    .optional(),
  blocked: z.object({ index: z.number().int().nonnegative(), reason: z.string() }).optional(),
  results: z.array(z.string()),
  // Executors' states are checked (and migrated) by core's own restore.
  memory: z.record(z.string(), z.unknown()),
  replans: z.number().int().nonnegative(),
  usage,
  finishReason: z.enum(['completed', 'stopped', 'timeout', 'cancelled', 'error']).optional(),
  answer: z.string().optional(),
  error: z
    .object({
      code: z.string(),
      message: z.string(),
      status: z.number().optional(),
      retryAfterMs: z.number().optional(),
    })
    .optional(),
});

/**
 * v2 gives the flow's error a code, as a run's (`RunError`); v1 had only its message, which becomes
 * `{ code: 'LEGACY', message }`. Anything else is left for the schema to judge.
 */
function migrateFlow(saved: unknown): unknown {
  if (typeof saved !== 'object' || saved === null || (saved as { schemaVersion?: unknown }).schemaVersion !== 1) {
    return saved;
  }
  const { error, ...rest } = saved as { readonly error?: unknown };
  return {
    ...rest,
    schemaVersion: 2,
    ...(error === undefined ? {} : { error: typeof error === 'string' ? { code: 'LEGACY', message: error } : error }),
  };
}

/**
 * A saved flow checked whole before anything is sent: its own fields, and every executor's
 * state through core's `restore`. A damaged or newer state is refused with the field named.
 */
export async function restoreFlow(saved: unknown): Promise<FlowState> {
  const version = (saved as { schemaVersion?: unknown } | null)?.schemaVersion;
  if (typeof version === 'number' && version > FLOW_SCHEMA_VERSION) {
    throw new InvalidStateError(
      `the saved flow has schemaVersion ${version}, newer than this package's ${FLOW_SCHEMA_VERSION}: upgrade @openmanus/flow`,
      'STATE_NEWER',
    );
  }
  const parsed = flowState.safeParse(migrateFlow(saved));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InvalidStateError(`the saved flow is invalid at ${issue?.path.join('.') || '(root)'}: ${issue?.message}`);
  }
  const memory: Record<string, AgentState> = {};
  for (const [key, state] of Object.entries(parsed.data.memory)) {
    try {
      memory[key] = await restore(state);
    } catch (error) {
      const why = messageOf(error);
      throw new InvalidStateError(`the saved flow's memory.${key} is not a valid agent state: ${why}`);
    }
  }
  return { ...(parsed.data as FlowState), memory };
}
