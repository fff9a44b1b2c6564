import type OpenAI from 'openai';
import type {
  ChatCompletion,
  ChatCompletionContentPart,
  ChatCompletionCreateParamsBase,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionFunctionTool,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';
import type { LlmRequest } from '../kernel/effects.js';
import type { LlmUsage } from '../kernel/events.js';
import type { ImageData, Message, ToolCall } from '../kernel/messages.js';
import type { ToolSpec } from '../kernel/tool.js';
import { lazyPromise } from '../lazyModule.js';
import { messageOf } from '../messageOf.js';
import { err, ok, type Result } from '../result.js';
import { attempt } from './attempts.js';
import { limitConcurrency } from './concurrency.js';
import { CONTEXT_LENGTH, failureFields, OVERLOADED, replyFailure, retryAfterMsOf } from './failures.js';
import { type LlmCallOptions, type LlmError, type LlmPort, type LlmResponse, portComplete } from './llm.js';
import { memoized } from './memo.js';
import { type LlmPortOptions, type PortLimits, portLimitsOf } from './portOptions.js';
import { priceOf } from './prices.js';
import { toPromptMessages } from './promptTools.js';
import { ReplyError, replyErrorOf } from './replyError.js';
import { argumentsOf, type Reading, type StopReasons, toResponse } from './replyParts.js';
import type { RequestGuard } from './requestGuard.js';
import { failedMidway, unanswered } from './stainlessErrors.js';
import { readStreamedReply } from './streamedReply.js';

export type ApiType = 'openai' | 'azure' | 'ollama';

export interface OpenAiLlmOptions extends LlmPortOptions {
  // `| undefined`: `apiKey: process.env.OPENAI_API_KEY` type-checks under exactOptionalPropertyTypes (as in the SDK's own options).
  readonly apiKey?: string | undefined;
  readonly baseURL?: string | undefined;
  readonly apiType?: ApiType;
  /** Azure OpenAI's `api-version`. */
  readonly apiVersion?: string;
  /** Reasoning models take `max_completion_tokens` and no temperature; inferred from the name when unset. */
  readonly reasoning?: boolean;
  /**
   * Send a request's cache key (a run's id) as `prompt_cache_key`, so one run's requests land on
   * the same prompt cache. Default true; false for a strict server that refuses unknown fields.
   */
  readonly promptCacheKey?: boolean;
  /** A ready-made client, e.g. one with a custom fetch. */
  readonly client?: OpenAI;
}

const REASONING_MODEL = /^(?:.*\/)?(?:o\d|gpt-5)/i;

export const isReasoningModel = (model: string): boolean => REASONING_MODEL.test(model);

/** The LLM port on the `openai` SDK: OpenAI, Azure OpenAI, Ollama and any compatible server. */
export function createOpenAiLlm(options: OpenAiLlmOptions): LlmPort {
  const limits = portLimitsOf(options);
  // The SDK is loaded on the first request, not when this module is imported; once it is, the
  // requests after take it as it is, without waiting for a settled promise.
  let ready: Connection | undefined;
  const connect = lazyPromise(async (): Promise<Connection> => {
    const openai = await import('openai');
    const made = options.client ?? makeClient(openai, options, limits);
    // Azure reads the model from the body as an object to route the request.
    ready = { openai, chat: made.chat.completions, writesBody: !(made instanceof openai.AzureOpenAI) };
    return ready;
  });
  const reasoning = options.reasoning ?? isReasoningModel(options.model);
  const promptMode = options.toolMode === 'prompt';
  const reading: Reading = { promptMode, price: options.price ?? priceOf(options.model) };

  const port: LlmPort = {
    model: options.model,
    complete: portComplete(async (request: LlmRequest, callOptions: LlmCallOptions = {}) => {
      const { params, messageTexts } = toParams(request, options, reasoning, promptMode);
      let connection: Connection;
      try {
        connection = ready ?? (await connect());
      } catch (error) {
        // Raised before any request, e.g. no API key: a setup problem, not the model's.
        return err({ kind: 'config', message: messageOf(error) });
      }
      const { openai, chat } = connection;
      // The body is written here from the kept texts (see sendOptions), where the client allows it.
      const texts = connection.writesBody ? messageTexts : undefined;
      const { onDelta } = callOptions;
      const send = async (guard: RequestGuard): Promise<Result<LlmResponse, LlmError>> => {
        if (!params.stream) {
          const completion = await chat.create(params, sendOptions(params, texts, guard.signal));
          // Some proxies answer 200 with an error in place of the completion.
          const { error } = completion as { error?: unknown };
          if (error) throw replyErrorOf(error);
          return fromCompletion(completion, reading);
        }
        // The SDK makes the request (and its retries); the events are read here (see readStreamedReply).
        const response = await chat.create(params, sendOptions(params, texts, guard.signal)).asResponse();
        const reply = await readStreamedReply(response.body, { arrived: guard.chunkArrived, onDelta });
        const { content: text, toolCalls, usage, finishReason: stopReason } = reply;
        return ok(toResponse({ text, toolCalls, usage: usage && usageOf(usage), stopReason }, reading, FINISH_REASONS));
      };
      return attempt({
        signal: callOptions.signal,
        limits,
        streamListener: options.stream ? onDelta : undefined,
        send,
        failure: (thrown) => {
          const error = toLlmError(openai, thrown);
          return { error, midway: failedMidway(openai.OpenAI, thrown, error) };
        },
      });
    }),
  };
  return limitConcurrency(port, limits.maxConcurrentRequests);
}

type OpenAiModule = typeof import('openai');

/** The loaded SDK, the port's client, and whether the port writes the request body itself. */
interface Connection {
  readonly openai: OpenAiModule;
  readonly chat: OpenAI['chat']['completions'];
  readonly writesBody: boolean;
}
type RequestOptions = NonNullable<Parameters<OpenAI['chat']['completions']['create']>[1]>;

function makeClient(sdk: OpenAiModule, options: OpenAiLlmOptions, limits: PortLimits): OpenAI {
  // The SDK's timeout bounds each attempt's wait for headers; the request's deadline bounds the rest.
  const common = { maxRetries: limits.maxRetries, timeout: limits.timeoutMs };
  if (options.apiType === 'azure') {
    return new sdk.AzureOpenAI({
      ...common,
      apiKey: options.apiKey,
      endpoint: options.baseURL,
      apiVersion: options.apiVersion,
      deployment: options.model,
    });
  }
  const ollama = options.apiType === 'ollama';
  return new sdk.OpenAI({
    ...common,
    apiKey: options.apiKey ?? (ollama ? 'ollama' : undefined),
    baseURL: options.baseURL ?? (ollama ? 'http://127.0.0.1:11434/v1' : undefined),
  });
}

/**
 * The request's body as the SDK would send it, written here: the messages' JSON is kept from the
 * run's last request and only the new ones are serialised, where the SDK would serialise the
 * whole history again at every step. One join makes it, in one piece: a string built by `+`
 * would be copied once more before it is sent.
 */
function sendOptions(
  params: ChatCompletionCreateParamsBase,
  messageTexts: readonly string[] | undefined,
  signal: AbortSignal,
): RequestOptions {
  if (!messageTexts) return { signal };
  const { messages: _, tools, ...rest } = params;
  const tail = tools ? `],"tools":${toolsJson(tools)},` : '],';
  const body = ['{"messages":['].concat(messageTexts, tail + JSON.stringify(rest).slice(1)).join('');
  return { signal, body, headers: { 'content-type': 'application/json' } };
}

// The tools of an agent are the same array at every request (see toolParams): written once.
const toolsJson = memoized((tools: readonly ChatCompletionTool[]): string => JSON.stringify(tools));

function toParams(
  request: LlmRequest,
  options: OpenAiLlmOptions,
  reasoning: boolean,
  promptMode: boolean,
): {
  params: ChatCompletionCreateParamsNonStreaming | ChatCompletionCreateParamsStreaming;
  messageTexts: readonly string[] | undefined;
} {
  const messages = promptMode
    ? toPromptMessages(request.messages, request.tools, request.toolChoice)
    : request.messages;
  const wire = convertMessages(messages, options.vision === true);
  // The SDK only reads the messages (its type says mutable).
  const messagesParam = wire.params as ChatCompletionMessageParam[];
  // Streaming asked for in the literal itself: on Node 20's V8, a spread with keys added
  // (`{ ...params, stream: true }`) makes a new hidden class per request, and every read of it misses.
  const params: ChatCompletionCreateParamsNonStreaming | ChatCompletionCreateParamsStreaming = options.stream
    ? { model: options.model, messages: messagesParam, stream: true, stream_options: { include_usage: true } }
    : { model: options.model, messages: messagesParam };
  if (!promptMode && request.tools.length > 0) {
    params.tools = toolParams(request.tools);
    params.tool_choice = request.toolChoice;
  }
  const cacheKey = request.cache?.key;
  if (cacheKey !== undefined && options.promptCacheKey !== false) params.prompt_cache_key = cacheKey;
  if (reasoning) {
    if (options.maxTokens !== undefined) params.max_completion_tokens = options.maxTokens;
  } else {
    if (options.maxTokens !== undefined) params.max_tokens = options.maxTokens;
    if (options.temperature !== undefined) params.temperature = options.temperature;
  }
  return { params, messageTexts: wire.texts };
}

// An agent's tool list is fixed for its life: converted once, not once per request.
const toolParams = memoized((tools: readonly ToolSpec[]): ChatCompletionFunctionTool[] =>
  tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: { ...t.parameters } },
  })),
);

const imagePart = (image: ImageData): ChatCompletionContentPart => ({
  type: 'image_url',
  image_url: { url: `data:${image.mimeType};base64,${image.base64}` },
});

/**
 * Our messages in the API's shape. Tool messages cannot carry images, so a tool's image goes
 * in a user message right after the block of tool results; models without vision get none.
 */
export function toOpenAiMessages(messages: readonly Message[], vision: boolean): ChatCompletionMessageParam[] {
  // A copy: the conversion is kept for the next request, and this caller may change its result.
  return convertMessages(messages, vision).params.slice();
}

/** The first `count` items: the array itself when that is all of it (it is never changed, only copied). */
const prefix = <T>(items: readonly T[], count: number): readonly T[] =>
  count === items.length ? items : items.slice(0, count);

/**
 * The messages in the API's shape and, without vision, their JSON texts (each after the first
 * with its comma: joined, they are the array's items). Both are kept for the run's next
 * request: the caller must not change them.
 */
export function convertMessages(
  messages: readonly Message[],
  vision: boolean,
): { readonly params: readonly ChatCompletionMessageParam[]; readonly texts?: readonly string[] } {
  if (!vision) {
    // A run's requests repeat its history: the part this one shares with the run's last one (the
    // same messages, from the start) is taken from that one's conversion and JSON texts.
    const key = messages[1] ?? messages[0];
    const last = key && lastConverted.get(key);
    let same = 0;
    if (last) {
      const most = Math.min(last.messages.length, messages.length);
      while (same < most && last.messages[same] === messages[same]) same++;
    }
    const shared = last && same > 0 ? last : undefined;
    const newParams: ChatCompletionMessageParam[] = [];
    const newTexts: string[] = [];
    // Only the new ones are converted (no memo per message: the kept params are the memo).
    for (let i = same; i < messages.length; i++) {
      const param = toOpenAiMessage(messages[i] as Message, false);
      newParams.push(param);
      newTexts.push(i === 0 ? JSON.stringify(param) : `,${JSON.stringify(param)}`);
    }
    // One copy each: the shared part (all of the last one's, mostly) with the new ones after it.
    const params = !shared ? newParams : prefix(shared.params, same).concat(newParams);
    const texts = !shared ? newTexts : prefix(shared.texts, same).concat(newTexts);
    // The caller's array as it is now: it may change it after the request.
    if (key) lastConverted.set(key, { messages: messages.slice(), params, texts });
    return { params, texts };
  }
  const out: ChatCompletionMessageParam[] = [];
  const once = (message: Message) => {
    let param = visionConverted.get(message);
    if (!param) {
      param = toOpenAiMessage(message, true);
      visionConverted.set(message, param);
    }
    return param;
  };
  let toolImages: { name: string; image: ImageData }[] = [];
  const flushToolImages = () => {
    if (toolImages.length === 0) return;
    const parts: ChatCompletionContentPart[] = toolImages.flatMap(({ name, image }) => [
      { type: 'text' as const, text: `Image returned by ${name}:` },
      imagePart(image),
    ]);
    out.push({ role: 'user', content: parts });
    toolImages = [];
  };
  for (const message of messages) {
    if (message.role !== 'tool') flushToolImages();
    else if (message.image) toolImages.push({ name: message.name, image: message.image });
    out.push(once(message));
  }
  flushToolImages();
  return { params: out };
}

// The last request of each run converted without vision, keyed by its first message after the
// system prompt (the task): the next request's history mostly sits at the same places; `texts`
// are the params as JSON.
const lastConverted = new WeakMap<
  Message,
  {
    readonly messages: readonly Message[];
    readonly params: readonly ChatCompletionMessageParam[];
    readonly texts: readonly string[];
  }
>();

// With vision the whole history is converted at each request (images move between messages):
// messages are immutable, so each is converted once, not once per request.
const visionConverted = new WeakMap<Message, ChatCompletionMessageParam>();

function toOpenAiMessage(message: Message, vision: boolean): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return vision && message.image
        ? {
            role: 'user',
            content: [{ type: 'text', text: message.content }, imagePart(message.image)],
          }
        : { role: 'user', content: message.content };
    case 'assistant':
      return message.toolCalls?.length
        ? {
            role: 'assistant',
            content: message.content || null,
            tool_calls: message.toolCalls.map((c) => ({
              id: c.id,
              type: 'function' as const,
              function: { name: c.name, arguments: c.arguments },
            })),
          }
        : { role: 'assistant', content: message.content };
    case 'tool':
      return {
        role: 'tool',
        tool_call_id: message.toolCallId,
        content: message.content,
      };
  }
}

function fromCompletion(completion: ChatCompletion, reading: Reading): Result<LlmResponse, LlmError> {
  const message = completion.choices?.[0]?.message;
  if (!message)
    return err({
      kind: 'malformed_response',
      message: 'the response has no choices[0].message',
    });
  const toolCalls: ToolCall[] = [];
  for (const call of message.tool_calls ?? []) {
    if (call.type !== 'function') continue;
    // Some compatible servers send the arguments as an object instead of a JSON string.
    toolCalls.push({ id: call.id, name: call.function.name, arguments: argumentsOf(call.function.arguments) });
  }
  const { usage } = completion;
  const parts = {
    text: message.content ?? '',
    toolCalls,
    usage: usage ? usageOf(usage) : undefined,
    stopReason: completion.choices[0]?.finish_reason,
  };
  return ok(toResponse(parts, reading, FINISH_REASONS));
}

const FINISH_REASONS: StopReasons = {
  stop: 'stop',
  tool_calls: 'tool_calls',
  function_call: 'tool_calls',
  length: 'length',
  content_filter: 'content_filter',
};

/** DeepSeek's own name for its cache hits, where OpenAI's is prompt_tokens_details.cached_tokens. */
type ReportedUsage = CompletionUsage & { readonly prompt_cache_hit_tokens?: number };

/** The usage a reply reports, with the cache and reasoning counts it gives. */
function usageOf(reported: ReportedUsage): LlmUsage {
  const prompt = reported.prompt_tokens_details;
  const cached = prompt?.cached_tokens ?? reported.prompt_cache_hit_tokens;
  const written = prompt?.cache_write_tokens;
  const reasoning = reported.completion_tokens_details?.reasoning_tokens;
  return {
    inputTokens: reported.prompt_tokens,
    outputTokens: reported.completion_tokens,
    ...(typeof cached === 'number' ? { cachedInputTokens: cached } : {}),
    ...(typeof written === 'number' ? { cacheWriteTokens: written } : {}),
    ...(typeof reasoning === 'number' ? { reasoningTokens: reasoning } : {}),
  };
}

function toLlmError({ OpenAI }: OpenAiModule, error: unknown): LlmError {
  const before = unanswered(OpenAI, error);
  if (before) return before;
  if (error instanceof OpenAI.APIError) {
    const { status, message } = error;
    const base = failureFields(message, status, retryAfterMsOf(error.headers));
    if (status === 429) return { kind: 'rate_limit', ...base };
    if (status === 401 || status === 403) return { kind: 'auth', ...base };
    if (status === 529 || (status === 503 && OVERLOADED.test(message))) return { kind: 'overloaded', ...base };
    if (status !== undefined && status >= 500) return { kind: 'server', ...base };
    if (error.code === 'context_length_exceeded' || CONTEXT_LENGTH.test(message)) {
      return { kind: 'context_length', ...base };
    }
    return { kind: 'bad_request', ...base };
  }
  if (error instanceof ReplyError) return fromReplyError(error);
  return replyFailure(error);
}

/**
 * An error sent in place of the reply. The request had been accepted (a bad one is refused before the
 * headers), so it is the server's own unless it says otherwise: a rate limit, an overlong
 * context, or a numeric code below 500 (an HTTP status, as proxies send it).
 */
function fromReplyError({ message, code, type }: ReplyError): LlmError {
  const numeric = typeof code === 'number' && code >= 400 && code < 600;
  const status = numeric ? { status: code } : {};
  const named = `${String(code ?? '')} ${String(type ?? '')}`;
  if (code === 429 || /rate_limit/.test(named)) return { kind: 'rate_limit', message, ...status };
  if (code === 529 || OVERLOADED.test(named)) return { kind: 'overloaded', message, ...status };
  if (/context_length/.test(named) || CONTEXT_LENGTH.test(message))
    return { kind: 'context_length', message, ...status };
  if (numeric && code < 500) return { kind: 'bad_request', message, ...status };
  return { kind: 'server', message, ...status };
}
