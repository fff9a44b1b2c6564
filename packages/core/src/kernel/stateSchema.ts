import { z } from 'zod';
import type { OpenManusErrorCode } from '../errors.js';
import { err, ok, type Result } from '../result.js';
import type { TokenizerName } from './agent.js';
import type { Role } from './messages.js';
import { describeValue, migrate, type StateRefusal } from './migrations.js';
import type { AgentState, CallPhase, FinishReason, PendingInput, RunStatus } from './state.js';
import { SCHEMA_VERSION } from './state.js';

/** Every member of a string union, once: `satisfies` stops compiling when state.ts adds or drops one. */
type AllOf<T extends string> = { readonly [K in T]: K };

const RUN_STATUSES = {
  idle: 'idle',
  awaiting_context: 'awaiting_context',
  awaiting_llm: 'awaiting_llm',
  awaiting_tools: 'awaiting_tools',
  awaiting_human: 'awaiting_human',
  awaiting_approval: 'awaiting_approval',
  finished: 'finished',
  failed: 'failed',
} as const satisfies AllOf<RunStatus>;

const FINISH_REASONS = {
  answered: 'answered',
  terminated: 'terminated',
  max_steps: 'max_steps',
  token_limit: 'token_limit',
  cancelled: 'cancelled',
  error: 'error',
} as const satisfies AllOf<FinishReason>;

const TOKENIZERS = {
  cl100k_base: 'cl100k_base',
  o200k_base: 'o200k_base',
  estimate: 'estimate',
} as const satisfies AllOf<TokenizerName>;

const CALL_PHASES = {
  approval: 'approval',
  human: 'human',
  running: 'running',
  done: 'done',
} as const satisfies AllOf<CallPhase>;

// Exhaustiveness of the two discriminated unions below, checked the same way.
({ system: 'system', user: 'user', assistant: 'assistant', tool: 'tool' }) satisfies AllOf<Role>;
({ human: 'human', approval: 'approval' }) satisfies AllOf<PendingInput['kind']>;

/** Counters: step, requestSeq, taskIndex, llmCalls, token counts. */
const count = z.number().int().nonnegative();
/** Anything JSON-shaped a tool, policy or provider keeps: checked by its owner, not here. */
const unknownRecord = z.record(z.string(), z.unknown());
/**
 * A field typed `unknown`, which TypeScript requires but lets hold undefined (a call's `args`
 * when its JSON did not parse). JSON drops an undefined value, so a saved state may lack the key:
 * optional at run time, typed as zod's required `unknown` so the AgentState check below holds.
 */
const unknownField = z.unknown().optional() as unknown as z.ZodUnknown;

const imageSchema = z.object({ base64: z.string(), mimeType: z.string() });

const toolCallSchema = z.object({ id: z.string(), name: z.string(), arguments: z.string() });

const reasoningSchema = z.object({
  text: z.string(),
  signature: z.string().optional(),
  redacted: z.string().optional(),
});

// Objects are not strict: a key this version does not know is ignored, not a reason to refuse a run.
const messageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: z.string() }),
  z.object({ role: z.literal('user'), content: z.string(), image: imageSchema.optional() }),
  z.object({
    role: z.literal('assistant'),
    content: z.string(),
    toolCalls: z.array(toolCallSchema).optional(),
    reasoning: z.array(reasoningSchema).optional(),
  }),
  z.object({
    role: z.literal('tool'),
    content: z.string(),
    toolCallId: z.string(),
    name: z.string(),
    image: imageSchema.optional(),
    brief: z.string().optional(),
  }),
]);

const pendingInputSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('human'),
    effectId: z.string(),
    question: z.string(),
    call: toolCallSchema,
    form: z.object({ message: z.string(), schema: unknownRecord }).optional(),
  }),
  z.object({ kind: z.literal('approval'), effectId: z.string(), call: toolCallSchema, args: unknownField }),
]);

const pendingCallSchema = z.object({
  call: toolCallSchema,
  phase: z.enum(CALL_PHASES),
  args: unknownField,
  output: z.string().optional(),
  isError: z.boolean().optional(),
  image: imageSchema.optional(),
  brief: z.string().optional(),
  // A long-running tool's own record (a child agent's state): that tool checks it when it resumes.
  progress: z.unknown().optional(),
  started: z.boolean().optional(),
  waiting: z.array(pendingInputSchema).optional(),
  answer: z
    .discriminatedUnion('type', [
      z.object({ type: z.literal('humanReplied'), effectId: z.string(), answer: z.string() }),
      z.object({ type: z.literal('approvalGiven'), effectId: z.string() }),
      z.object({ type: z.literal('approvalDenied'), effectId: z.string(), reason: z.string().optional() }),
    ])
    .optional(),
});

const toolSpecSchema = z.object({
  name: z.string(),
  description: z.string(),
  parameters: unknownRecord,
  terminal: z.boolean().optional(),
  needsApproval: z.boolean().optional(),
  parallelSafe: z.boolean().optional(),
  human: z.object({ questionArg: z.string() }).optional(),
  timeoutMs: z.number().nonnegative().optional(),
  atMostOnce: z.boolean().optional(),
});

/** The shape of AgentState v2. Which combinations of fields can run is `findInconsistency`'s part. */
export const agentStateSchema = z.object({
  schemaVersion: z.literal(SCHEMA_VERSION),
  runId: z.string().optional(),
  status: z.enum(RUN_STATUSES),
  step: count,
  requestSeq: count,
  messages: z.array(messageSchema),
  taskIndex: count,
  turn: z.object({ calls: z.array(pendingCallSchema) }).optional(),
  context: z.object({ pending: z.array(z.string()), gathered: unknownRecord }).optional(),
  tools: z.array(toolSpecSchema).optional(),
  unavailableTools: z.array(z.string()).optional(),
  toolData: unknownRecord.optional(),
  summary: z.object({ text: z.string(), upTo: count }).optional(),
  compacting: z.object({ upTo: count }).optional(),
  window: z.object({ start: count, leftOut: z.string() }).optional(),
  historyTokens: z.object({ tokenizer: z.enum(TOKENIZERS), from: count, to: count, tokens: count }).optional(),
  policies: unknownRecord,
  usage: z.object({
    inputTokens: z.number().nonnegative(),
    outputTokens: z.number().nonnegative(),
    llmCalls: count,
    // Absent in states saved before the cache and cost were counted: those load as they are.
    cachedInputTokens: z.number().nonnegative().optional(),
    cacheWriteTokens: z.number().nonnegative().optional(),
    reasoningTokens: z.number().nonnegative().optional(),
    costUsd: z.number().nonnegative().nullable().optional(),
  }),
  reprompted: z.boolean(),
  finishReason: z.enum(FINISH_REASONS).optional(),
  answer: z.string().optional(),
  error: z
    .object({
      // Any string: a code a later version adds still loads (codes are only ever added).
      code: z.string() as z.ZodType<OpenManusErrorCode>,
      message: z.string(),
      status: z.number().int().optional(),
      retryAfterMs: z.number().nonnegative().optional(),
    })
    .optional(),
});

// Compiled once, on first use: a long history is checked by one generated function, without per-node dispatch.
// Where `new Function` is not allowed, z.compile hands the schema back and zod's interpreter checks instead.
// Typed as a schema of AgentState, so this fails to compile if the schema admits what AgentState does not
// (a required field missing here, a wider type).
let compiledSchema: z.ZodType<AgentState> | undefined;

/** Checks without building anything: zod's parse would return a deep copy of a large state. */
const isAgentState = (value: unknown): value is AgentState => {
  compiledSchema ??= z.compile(agentStateSchema);
  return compiledSchema.validate(value);
};

/** Where a state is damaged and how, as `saved state is damaged at <path>: <problem>` says it. */
interface Damage {
  readonly path: string;
  readonly problem: string;
}

const damaged = ({ path, problem }: Damage): StateRefusal => ({
  code: 'STATE_DAMAGED',
  message: `saved state is damaged at ${path}: ${problem}`,
});

const OPEN_CALL_STATUSES: ReadonlySet<RunStatus> = new Set(['awaiting_tools', 'awaiting_approval', 'awaiting_human']);

/** Fields that are each well-formed but together leave nothing to resume (or nothing to report). */
function findInconsistency(state: AgentState): Damage | undefined {
  const { status } = state;
  if (OPEN_CALL_STATUSES.has(status) && !state.turn?.calls.some((pending) => pending.phase !== 'done')) {
    return { path: 'turn', problem: `a run ${status} needs a turn with a call still open` };
  }
  if (status === 'awaiting_context') {
    if (!state.context) return { path: 'context', problem: 'a run awaiting_context needs a context being gathered' };
    if (state.context.pending.length === 0) {
      return { path: 'context.pending', problem: 'a run awaiting_context needs a provider still pending' };
    }
  }
  if ((status === 'finished' || status === 'failed') && state.finishReason === undefined) {
    return { path: 'finishReason', problem: `a ${status} run needs a finishReason` };
  }
  const length = state.messages.length;
  if (length > 0 && state.taskIndex >= length) {
    return { path: 'taskIndex', problem: `${state.taskIndex} is past the last message (index ${length - 1})` };
  }
  if (state.compacting && status !== 'awaiting_llm') {
    return { path: 'compacting', problem: `a summary is only written while awaiting_llm, not ${status}` };
  }
  for (const [path, upTo] of [
    ['summary.upTo', state.summary?.upTo],
    ['compacting.upTo', state.compacting?.upTo],
    ['window.start', state.window?.start],
  ] as const) {
    if (upTo !== undefined && upTo > length)
      return { path, problem: `${upTo} is past the end of the messages (${length})` };
  }
  return findUnansweredResult(state);
}

/** A tool result must answer a call some earlier assistant message made: the model API refuses it otherwise. */
function findUnansweredResult({ messages }: AgentState): Damage | undefined {
  const callIds = new Set<string>();
  for (const [index, message] of messages.entries()) {
    if (message.role === 'assistant') {
      for (const call of message.toolCalls ?? []) callIds.add(call.id);
    } else if (message.role === 'tool' && !callIds.has(message.toolCallId)) {
      return {
        path: `messages[${index}].toolCallId`,
        problem: `${describeValue(message.toolCallId)} answers no tool call of an earlier assistant message`,
      };
    }
  }
  return undefined;
}

/** `messages[3].toolCalls[0].id`, the way the field reads in code. */
function formatPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const key of path) {
    if (typeof key === 'number') text += `[${key}]`;
    else text += text === '' ? String(key) : `.${String(key)}`;
  }
  return text === '' ? '(the state itself)' : text;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type': {
      const expected = issue.expected === 'int' ? 'an integer' : issue.expected;
      return `expected ${expected}, received ${describeValue(issue.input)}`;
    }
    case 'too_small':
    case 'too_big': {
      const received = describeValue(issue.input);
      // zod's integers stop at ±2^53 - 1, where a count can no longer be exact.
      if (issue.origin === 'int') return `expected a safe integer, received ${received}`;
      const bound = issue.code === 'too_small' ? `at least ${issue.minimum}` : `at most ${issue.maximum}`;
      return `expected ${bound}, received ${received}`;
    }
    case 'invalid_value':
      return `expected ${issue.values.map(describeValue).join(' | ')}, received ${describeValue(issue.input)}`;
    case 'invalid_union': {
      // A discriminated union's issue is placed on the discriminator; the input is the whole object.
      const { discriminator, input } = issue;
      if (discriminator === undefined || !('options' in issue) || !issue.options) return issue.message;
      const found = typeof input === 'object' && input !== null ? Reflect.get(input, discriminator) : undefined;
      return `expected ${issue.options.map(describeValue).join(' | ')}, received ${describeValue(found)}`;
    }
    default:
      return issue.message;
  }
}

/** The first damage the schema finds; parsing again costs nothing that matters on this (failing) path. */
function firstSchemaDamage(state: unknown): Damage {
  const parsed = agentStateSchema.safeParse(state, { reportInput: true });
  const issue = parsed.error?.issues[0];
  if (!issue) return { path: '(the state itself)', problem: 'does not match the state schema' };
  return { path: formatPath(issue.path), problem: describeIssue(issue) };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Checks a saved state (parsed JSON) before a run resumes from it: older schema versions are
 * migrated, a newer or damaged one is refused with the field and the reason. A valid current
 * state comes back as the very object given, not a copy. Never throws on plain data.
 */
export function restoreState(saved: unknown): Result<AgentState, StateRefusal> {
  if (!isRecord(saved)) {
    // The usual slip: the saved text itself, not parsed yet.
    const hint = typeof saved === 'string' ? ' (parse the saved text with JSON.parse first)' : '';
    return err({
      code: 'STATE_DAMAGED',
      message: `a saved state must be a JSON object, received ${describeValue(saved)}${hint}`,
    });
  }
  const migrated = migrate(saved);
  if (migrated.isErr()) return err(migrated.error);
  const state = migrated.value;
  if (!isAgentState(state)) return err(damaged(firstSchemaDamage(state)));
  const inconsistency = findInconsistency(state);
  return inconsistency ? err(damaged(inconsistency)) : ok(state);
}
