import type {
  LanguageModelV3CallOptions,
  LanguageModelV3StreamPart,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4FunctionTool,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
  SharedV4ProviderMetadata,
} from '@ai-sdk/provider';
import type { LlmRequest } from '../kernel/effects.js';
import type { LlmUsage } from '../kernel/events.js';
import type { ReasoningPart } from '../kernel/messages.js';
import type { ToolSpec } from '../kernel/tool.js';
import { ok } from '../result.js';
import { toLlmError } from './aiSdkErrors.js';
import { optionsKeyOf, toAiSdkPrompt, toV3Prompt } from './aiSdkPrompt.js';
import { attempt } from './attempts.js';
import { limitConcurrency } from './concurrency.js';
import { retryable } from './failures.js';
import { type LlmCallOptions, type LlmPort, portComplete } from './llm.js';
import { memoized } from './memo.js';
import type { LanguageModelV3, LanguageModelV4, SharedV4ProviderOptions } from './optionalPeers.js';
import { type LlmPortOptions, portLimitsOf } from './portOptions.js';
import { priceOf } from './prices.js';
import { toPromptMessages } from './promptTools.js';
import { type Reading, type ReplyParts, type StopReasons, thought, toResponse } from './replyParts.js';
import { ReplyCutShortError, tell } from './replyStream.js';
import type { RequestGuard } from './requestGuard.js';

/** A language model of the AI SDK: any provider's (`@ai-sdk/*`), of specification v4 (AI SDK 7) or v3 (AI SDK 6). */
export type AiSdkModel = LanguageModelV4 | LanguageModelV3;

export interface AiSdkLlmOptions extends Omit<LlmPortOptions, 'model'> {
  /** The port's model name (for logs, records and the price table); default the model's `modelId`. */
  readonly model?: string;
  /** Send a request's cache key (a run's id) as OpenAI's `promptCacheKey`, for OpenAI models. Default true. */
  readonly promptCacheKey?: boolean;
  /** More of the provider's own options, sent with every request (e.g. `{ anthropic: { thinking: … } }`). */
  readonly providerOptions?: SharedV4ProviderOptions;
}

/**
 * The LLM port on any AI SDK language model: its reply streamed or whole, tool calls, usage with
 * the cache and reasoning counts the provider reports, reasoning kept and sent back, errors by
 * kind, retries, time limits, and the prompt-cache marks of providers that take them.
 */
export function fromAiSdk(model: AiSdkModel, options: AiSdkLlmOptions = {}): LlmPort {
  if (model?.specificationVersion !== 'v4' && model?.specificationVersion !== 'v3') {
    const version = (model as { specificationVersion?: unknown } | undefined)?.specificationVersion;
    throw new TypeError(`fromAiSdk takes a language model of specification v4 or v3, got ${String(version)}`);
  }
  const limits = portLimitsOf(options);
  const name = options.model ?? model.modelId;
  const optionsKey = optionsKeyOf(model.provider);
  const promptMode = options.toolMode === 'prompt';
  const reading: Reading = { promptMode, price: options.price ?? priceOf(name) };

  const send = async (request: LlmRequest, guard: RequestGuard, onDelta: LlmCallOptions['onDelta']) => {
    const call = callOptionsOf(request, options, optionsKey, guard.signal);
    const reply = options.stream
      ? await readStream(model, call, guard, onDelta)
      : readContent(
          model.specificationVersion === 'v4' ? await model.doGenerate(call) : await model.doGenerate(v3(call)),
        );
    return toResponse(reply, reading, FINISH_REASONS);
  };

  const port: LlmPort = {
    model: name,
    complete: portComplete(async (request: LlmRequest, callOptions: LlmCallOptions = {}) => {
      const { onDelta } = callOptions;
      const sent = promptMode ? inPromptMode(request) : request;
      return attempt({
        signal: callOptions.signal,
        limits,
        streamListener: options.stream ? onDelta : undefined,
        send: async (guard) => ok(await send(sent, guard, onDelta)),
        // The AI SDK's models do not retry: whatever may pass is tried again here, before or after the headers.
        failure: (thrown) => {
          const error = toLlmError(thrown instanceof StreamFailed ? thrown.failure : thrown);
          return { error, midway: retryable(error) };
        },
      });
    }),
  };
  return limitConcurrency(port, limits.maxConcurrentRequests);
}

/**
 * The request as the prompt tool mode sends it: no tools, their prompt in the system message (put
 * in front where there was none, which moves the stable prefix's end by one).
 */
function inPromptMode(request: LlmRequest): LlmRequest {
  const messages = toPromptMessages(request.messages, request.tools, request.toolChoice);
  const { cache } = request;
  const moved = messages.length - request.messages.length;
  const stable =
    cache && cache.stableMessages > 0 ? { cache: { ...cache, stableMessages: cache.stableMessages + moved } } : {};
  return { ...request, messages, tools: [], ...stable };
}

/** The call as a v3 model takes it: the same, but for the prompt's file parts. */
const v3 = (call: LanguageModelV4CallOptions): LanguageModelV3CallOptions => {
  const { reasoning: _, ...rest } = call;
  return { ...rest, prompt: toV3Prompt(call.prompt) };
};

function callOptionsOf(
  request: LlmRequest,
  options: AiSdkLlmOptions,
  optionsKey: string,
  abortSignal: AbortSignal,
): LanguageModelV4CallOptions {
  const prompt = toAiSdkPrompt(request.messages, {
    vision: options.vision === true,
    optionsKey,
    stableMessages: request.cache?.stableMessages ?? 0,
  });
  const providerOptions: SharedV4ProviderOptions = { ...options.providerOptions };
  const cacheKey = request.cache?.key;
  if (optionsKey === 'openai' && cacheKey !== undefined && options.promptCacheKey !== false) {
    providerOptions.openai = { ...providerOptions.openai, promptCacheKey: cacheKey };
  }
  return {
    prompt,
    abortSignal,
    ...(request.tools.length > 0 ? { tools: toolsOf(request.tools), toolChoice: { type: request.toolChoice } } : {}),
    ...(options.maxTokens !== undefined ? { maxOutputTokens: options.maxTokens } : {}),
    ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
    ...(Object.keys(providerOptions).length > 0 ? { providerOptions } : {}),
  };
}

// An agent's tool list is fixed for its life: converted once, not once per request.
const toolsOf = memoized((tools: readonly ToolSpec[]): LanguageModelV4FunctionTool[] =>
  tools.map((t) => ({
    type: 'function',
    name: t.name,
    description: t.description,
    inputSchema: { ...t.parameters } as LanguageModelV4FunctionTool['inputSchema'],
  })),
);

/** Why the reply ended: the SDK's unified reason (v3's are v4's but `interrupted`). */
interface FinishReason {
  readonly unified: string;
}

/** A stream's error part: what the provider said went wrong (kept as sent, read by `toLlmError`; internal, never escapes). */
class StreamFailed extends Error {
  override readonly name = 'StreamFailed';
  constructor(readonly failure: unknown) {
    super('the reply stream reported an error');
  }
}

type StreamPart = LanguageModelV4StreamPart | LanguageModelV3StreamPart;

async function readStream(
  model: AiSdkModel,
  call: LanguageModelV4CallOptions,
  guard: RequestGuard,
  onDelta: LlmCallOptions['onDelta'],
): Promise<ReplyParts> {
  const { stream } = model.specificationVersion === 'v4' ? await model.doStream(call) : await model.doStream(v3(call));
  const reader = (stream as ReadableStream<StreamPart>).getReader();
  const reply = new ReplyAssembler(onDelta);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      // Stopped (a deadline, the caller's abort): the answer is given; nothing more is told.
      if (guard.signal.aborted) throw new Error('the request was stopped');
      if (done) break;
      guard.chunkArrived();
      reply.add(value);
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  return reply.finish();
}

/** A tool call as its parts arrive: who it is, then its input piece by piece, then whole. */
interface CallSoFar {
  readonly index: number;
  readonly id: string;
  readonly name: string;
  input: string;
  signature?: string;
}

/** Puts a streamed reply together from its parts, telling `onDelta` of each piece. */
class ReplyAssembler {
  private readonly text: string[] = [];
  private readonly reasoning = new Map<string, { text: string; metadata: SharedV4ProviderMetadata }>();
  private readonly calls = new Map<string, CallSoFar>();
  // Calls the provider ran itself (a server tool): not ours to run, nor to report.
  private readonly providerCalls = new Set<string>();
  private usage: LanguageModelV4Usage | undefined;
  private finishReason: FinishReason | undefined;

  constructor(private readonly onDelta: LlmCallOptions['onDelta']) {}

  add(part: StreamPart): void {
    switch (part.type) {
      case 'text-delta':
        this.text.push(part.delta);
        if (part.delta) tell(this.onDelta, { text: part.delta });
        return;
      case 'reasoning-start':
      case 'reasoning-delta':
      case 'reasoning-end': {
        const block = this.reasoning.get(part.id) ?? { text: '', metadata: {} };
        if (part.type === 'reasoning-delta') block.text += part.delta;
        block.metadata = merged(block.metadata, part.providerMetadata);
        this.reasoning.set(part.id, block);
        return;
      }
      case 'tool-input-start':
        if (part.providerExecuted) {
          this.providerCalls.add(part.id);
          return;
        }
        this.startCall(part.id, part.toolName, '');
        return;
      case 'tool-input-delta': {
        const call = this.calls.get(part.id);
        if (!call || !part.delta) return;
        call.input += part.delta;
        tell(this.onDelta, { toolCall: { index: call.index, arguments: part.delta } });
        return;
      }
      case 'tool-call': {
        if (part.providerExecuted || this.providerCalls.has(part.toolCallId)) return;
        // A provider that sends its calls whole (no input parts before): told in one piece.
        const call = this.calls.get(part.toolCallId) ?? this.startCall(part.toolCallId, part.toolName, part.input);
        // The whole input is the call's: a provider's pieces may not add up to it exactly.
        call.input = part.input;
        const signature = signatureOf(part.providerMetadata);
        if (signature) call.signature = signature;
        return;
      }
      case 'finish':
        this.usage = part.usage;
        this.finishReason = part.finishReason;
        return;
      case 'error':
        throw new StreamFailed(part.error);
      default:
        return;
    }
  }

  finish(): ReplyParts {
    const finishReason = this.finishReason;
    if (!finishReason || finishReason.unified === 'interrupted') {
      throw new ReplyCutShortError('the reply stream ended before the reply did (no finish part)');
    }
    const calls = [...this.calls.values()];
    const reasoning = [...this.reasoning.values()].map(({ text, metadata }) => reasoningPart(text, metadata));
    return {
      text: this.text.join(''),
      toolCalls: calls.map(({ id, name, input }) => ({ id, name, arguments: input || '{}' })),
      reasoning: [...reasoning, ...signedCalls(calls)],
      stopReason: finishReason.unified,
      usage: this.usage && usageOf(this.usage),
    };
  }

  private startCall(id: string, name: string, input: string): CallSoFar {
    const call: CallSoFar = { index: this.calls.size, id, name, input };
    this.calls.set(id, call);
    tell(this.onDelta, { toolCall: { index: call.index, id, name, ...(input ? { arguments: input } : {}) } });
    return call;
  }
}

/** A reply given whole (`doGenerate`). */
function readContent(result: {
  content: readonly unknown[];
  usage: LanguageModelV4Usage;
  finishReason: FinishReason;
}): ReplyParts {
  const text: string[] = [];
  const reasoning: ReasoningPart[] = [];
  const calls: CallSoFar[] = [];
  for (const part of result.content as LanguageModelV4Content[]) {
    if (part.type === 'text') text.push(part.text);
    else if (part.type === 'reasoning') reasoning.push(reasoningPart(part.text, part.providerMetadata ?? {}));
    else if (part.type === 'tool-call' && !part.providerExecuted) {
      const signature = signatureOf(part.providerMetadata);
      calls.push({
        index: calls.length,
        id: part.toolCallId,
        name: part.toolName,
        input: part.input,
        ...(signature ? { signature } : {}),
      });
    }
  }
  return {
    text: text.join(''),
    toolCalls: calls.map(({ id, name, input }) => ({ id, name, arguments: input || '{}' })),
    reasoning: [...reasoning, ...signedCalls(calls)],
    stopReason: result.finishReason?.unified,
    usage: result.usage && usageOf(result.usage),
  };
}

/**
 * Gemini signs a reply's function calls (`thoughtSignature`) and wants the signature back on the
 * call: kept as reasoning without text, in the calls' order (see `assistantContent` in aiSdkPrompt.ts).
 */
const signedCalls = (calls: readonly CallSoFar[]): ReasoningPart[] =>
  calls.flatMap((call) => (call.signature ? [{ text: '', signature: call.signature }] : []));

const merged = (a: SharedV4ProviderMetadata, b: SharedV4ProviderMetadata | undefined): SharedV4ProviderMetadata => {
  if (!b) return a;
  const out: SharedV4ProviderMetadata = { ...a };
  for (const [key, value] of Object.entries(b)) out[key] = { ...out[key], ...value };
  return out;
};

/** A signature in the provider's metadata: Anthropic's and Bedrock's `signature`, Gemini's `thoughtSignature`. */
function signatureOf(metadata: SharedV4ProviderMetadata | undefined): string | undefined {
  for (const value of Object.values(metadata ?? {})) {
    const signature = value.signature ?? value.thoughtSignature;
    if (typeof signature === 'string' && signature) return signature;
  }
  return undefined;
}

function reasoningPart(text: string, metadata: SharedV4ProviderMetadata): ReasoningPart {
  const redacted = Object.values(metadata)
    .map((value) => value.redactedData)
    .find((data) => typeof data === 'string');
  if (typeof redacted === 'string') return { text, redacted };
  return thought(text, signatureOf(metadata));
}

const FINISH_REASONS: StopReasons = {
  stop: 'stop',
  'tool-calls': 'tool_calls',
  length: 'length',
  'content-filter': 'content_filter',
};

/**
 * The usage the provider reported. The AI SDK fills in zeros for counts a provider did not give:
 * zero cache and reasoning counts are left out, as not reported.
 */
function usageOf(reported: LanguageModelV4Usage): LlmUsage | undefined {
  const { inputTokens: input, outputTokens: output } = reported;
  const cached = input.cacheRead ?? 0;
  const written = input.cacheWrite ?? 0;
  const inputTokens = input.total ?? (input.noCache ?? 0) + cached + written;
  const outputTokens = output.total ?? (output.text ?? 0) + (output.reasoning ?? 0);
  if (input.total === undefined && output.total === undefined && inputTokens === 0 && outputTokens === 0)
    return undefined;
  return {
    inputTokens,
    outputTokens,
    ...(cached > 0 ? { cachedInputTokens: cached } : {}),
    ...(written > 0 ? { cacheWriteTokens: written } : {}),
    ...(output.reasoning ? { reasoningTokens: output.reasoning } : {}),
  };
}
