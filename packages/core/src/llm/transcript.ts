import { readFile } from 'node:fs/promises';
import type * as Zod from 'zod';
import { hasErrorCode, OpenManusError } from '../errors.js';
import type { ToolChoice } from '../kernel/agent.js';
import type { LlmUsage } from '../kernel/events.js';
import type { ToolCall } from '../kernel/messages.js';
import { loadZod } from '../lazyModule.js';
import { err, ok, type Result } from '../result.js';
import type { LlmError, LlmErrorKind, LlmResponse } from './llm.js';
import { fromPlaceholders, mapStrings, type Placeholders } from './placeholders.js';

/** The transcript format this version writes and reads. */
export const TRANSCRIPT_VERSION = 1;

/**
 * What a model call was asked, compact enough to keep and precise enough to tell a changed agent:
 * one entry per message (`<role>[ <tool name>] <hash>`) and per tool (`<name> <hash>`), the hash
 * over what the model sees with placeholders put in (images count by their type, not their bytes).
 */
export interface RequestFingerprint {
  readonly messages: readonly string[];
  readonly tools: readonly string[];
  readonly toolChoice: ToolChoice;
  readonly profile?: string;
  /** The start of each message first sent in this call, by its hash: what a divergence shows. */
  readonly excerpts?: Readonly<Record<string, string>>;
}

export interface RecordedToolCall {
  readonly id: string;
  readonly name: string;
  /** The parsed arguments when the model wrote them as compact JSON, else the text it wrote. */
  readonly arguments: unknown;
}

/** A reply, in the testing kit's script format (`startOpenAiServer` serves it) plus what was asked. */
export interface RecordedAnswer {
  readonly request: RequestFingerprint;
  readonly content: string;
  readonly toolCalls?: readonly RecordedToolCall[];
  /** What the port reported the reply used, its cost included (a replay reports what the recorded run paid). */
  readonly usage?: LlmUsage;
}

/** A failed call, as the port reported it. */
export interface RecordedFailure {
  readonly request: RequestFingerprint;
  readonly error: {
    readonly kind: LlmErrorKind;
    readonly message: string;
    readonly status?: number;
    readonly retryAfterMs?: number;
  };
}

export type RecordedReply = RecordedAnswer | RecordedFailure;

/** A recording of a run's model calls, in order: the file `recordLlm` writes and `replayLlm` answers from. */
export interface Transcript {
  readonly version: typeof TRANSCRIPT_VERSION;
  /** The model that answered. */
  readonly model: string;
  readonly replies: readonly RecordedReply[];
}

/** A transcript that cannot be used: not JSON, cut short, damaged, or from a newer version. */
export class TranscriptError extends OpenManusError<'TRANSCRIPT_INVALID'> {
  static readonly codes = ['TRANSCRIPT_INVALID'] as const;
  override readonly name = 'TranscriptError';
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super('TRANSCRIPT_INVALID', message, options);
  }
  static override isInstance(value: unknown): value is TranscriptError {
    return hasErrorCode(value, TranscriptError.codes);
  }
}

const isFailure = (reply: RecordedReply): reply is RecordedFailure => 'error' in reply;

/** A recorded reply as the port answers it in this run: placeholders filled in, arguments as text. */
export function restoreReply(reply: RecordedReply, placeholders: Placeholders = {}): Result<LlmResponse, LlmError> {
  const fill = (text: string) => fromPlaceholders(text, placeholders);
  if (isFailure(reply)) return err({ ...reply.error, message: fill(reply.error.message) });
  const toolCalls: ToolCall[] = (reply.toolCalls ?? []).map((call) => ({
    id: call.id,
    name: call.name,
    arguments:
      typeof call.arguments === 'string'
        ? fromPlaceholders(call.arguments, placeholders, true)
        : JSON.stringify(mapStrings(call.arguments, fill)),
  }));
  return ok({ content: fill(reply.content), toolCalls, ...(reply.usage ? { usage: reply.usage } : {}) });
}

function transcriptSchema() {
  const { z } = loadZod();
  const request = z.object({
    messages: z.array(z.string()),
    tools: z.array(z.string()),
    toolChoice: z.enum(['auto', 'required', 'none']),
    profile: z.string().optional(),
    excerpts: z.record(z.string(), z.string()).optional(),
  });
  const tokens = z.number().int().nonnegative();
  const answer = z.object({
    request,
    content: z.string(),
    toolCalls: z.array(z.object({ id: z.string(), name: z.string(), arguments: z.unknown() })).optional(),
    usage: z
      .object({
        inputTokens: tokens,
        outputTokens: tokens,
        cachedInputTokens: tokens.optional(),
        cacheWriteTokens: tokens.optional(),
        reasoningTokens: tokens.optional(),
        costUsd: z.number().nonnegative().nullable().optional(),
      })
      .optional(),
  });
  const failure = z.object({
    request,
    error: z.object({
      kind: z.enum([
        'rate_limit',
        'overloaded',
        'server',
        'network',
        'timeout',
        'aborted',
        'bad_request',
        'auth',
        'context_length',
        'config',
        'malformed_response',
      ]),
      message: z.string(),
      status: z.number().int().optional(),
      retryAfterMs: z.number().nonnegative().optional(),
    }),
  });
  return {
    transcript: z.object({ version: z.literal(TRANSCRIPT_VERSION), model: z.string(), replies: z.array(z.unknown()) }),
    answer,
    failure,
  };
}

/** The first problem zod found, as `where: what`. */
function damage(issues: readonly Zod.core.$ZodIssue[], prefix: string): string {
  const issue = issues[0];
  const path = (issue?.path ?? []).map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`)).join('');
  return `${`${prefix}${path}`.replace(/^\./, '') || 'the top'}: ${issue?.message}`;
}

/** Reads a transcript from its JSON text; `source` names it in errors (a file path). */
export function parseTranscript(text: string, source = 'the transcript'): Transcript {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new TranscriptError(`${source} is not valid JSON (cut short, or not a transcript): ${why}`);
  }
  const version = typeof data === 'object' && data !== null ? Reflect.get(data, 'version') : undefined;
  if (typeof version !== 'number')
    throw new TranscriptError(`${source} is not a transcript: it has no "version" (recordLlm writes one)`);
  if (version > TRANSCRIPT_VERSION)
    throw new TranscriptError(
      `${source} is transcript version ${version}; this version of @openmanus/core reads version ${TRANSCRIPT_VERSION}`,
    );
  const schemas = transcriptSchema();
  const top = schemas.transcript.safeParse(data);
  if (!top.success) throw new TranscriptError(`${source} is damaged at ${damage(top.error.issues, '')}`);
  top.data.replies.forEach((reply, index) => {
    // A reply is a failure when it has an error, else an answer: checked as that, for a precise message.
    const schema = typeof reply === 'object' && reply !== null && 'error' in reply ? schemas.failure : schemas.answer;
    const checked = schema.safeParse(reply);
    if (!checked.success)
      throw new TranscriptError(`${source} is damaged at ${damage(checked.error.issues, `replies[${index}]`)}`);
  });
  return data as Transcript;
}

/** Reads a transcript file (see `parseTranscript`). */
export async function loadTranscript(file: string): Promise<Transcript> {
  return parseTranscript(await readFile(file, 'utf8'), file);
}
