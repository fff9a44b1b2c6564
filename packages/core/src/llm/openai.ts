import type OpenAI from 'openai';
import type {
  ChatCompletion,
  ChatCompletionContentPart,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionFunctionTool,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import type { LlmRequest } from '../kernel/effects.js';
import type { ImageData, Message, ToolCall } from '../kernel/messages.js';
import type { ToolSpec } from '../kernel/tool.js';
import { err, ok, type Result } from '../result.js';
import { linkAbort } from '../shell/abort.js';
import type { LlmCallOptions, LlmError, LlmPort, LlmResponse } from './llm.js';
import { parseToolCalls, toPromptMessages } from './promptTools.js';

export type ApiType = 'openai' | 'azure' | 'ollama';

export interface OpenAiLlmOptions {
  readonly model: string;
  readonly apiKey?: string;
  readonly baseURL?: string;
  readonly apiType?: ApiType;
  /** Azure OpenAI's `api-version`. */
  readonly apiVersion?: string;
  readonly maxTokens?: number;
  readonly temperature?: number;
  /** Reasoning models take `max_completion_tokens` and no temperature; inferred from the name when unset. */
  readonly reasoning?: boolean;
  /** The model accepts images; tool images are then sent as a follow-up user message. */
  readonly vision?: boolean;
  /** `native` function calling, or `prompt` for models without it (calls parsed from the text). */
  readonly toolMode?: 'native' | 'prompt';
  /** Retries of 408/409/429/5xx and network errors, honouring Retry-After (the SDK's own retry). */
  readonly maxRetries?: number;
  readonly timeoutMs?: number;
  /** Stream the reply (usage still reported); for servers that time out long non-streamed calls. */
  readonly stream?: boolean;
  /** A ready-made client, e.g. one with a custom fetch. */
  readonly client?: OpenAI;
}

const REASONING_MODEL = /^(?:.*\/)?(?:o\d|gpt-5)/i;

export const isReasoningModel = (model: string): boolean => REASONING_MODEL.test(model);

/** The LLM port on the `openai` SDK: OpenAI, Azure OpenAI, Ollama and any compatible server. */
export function createOpenAiLlm(options: OpenAiLlmOptions): LlmPort {
  // The SDK is loaded on the first request, not when this module is imported.
  const sdk = lazy(() => import('openai'));
  const client = lazy(async () => options.client ?? makeClient(await sdk(), options));
  const reasoning = options.reasoning ?? isReasoningModel(options.model);
  const promptMode = options.toolMode === 'prompt';

  return {
    model: options.model,
    async complete(request: LlmRequest, callOptions: LlmCallOptions = {}): Promise<Result<LlmResponse, LlmError>> {
      const params = toParams(request, options, reasoning, promptMode);
      // The SDK never removes its listener from the signal it gets: give it one per request.
      const link = callOptions.signal ? linkAbort(callOptions.signal) : undefined;
      try {
        const chat = (await client()).chat.completions;
        const completion = options.stream
          ? await chat
              .stream({ ...params, stream: true, stream_options: { include_usage: true } }, { signal: link?.signal })
              .finalChatCompletion()
          : await chat.create(params, { signal: link?.signal });
        return fromCompletion(completion, promptMode);
      } catch (error) {
        return err(toLlmError(await sdk(), error));
      } finally {
        link?.dispose();
      }
    },
  };
}

function lazy<T>(load: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => {
    value ??= load();
    return value;
  };
}

type OpenAiModule = typeof import('openai');

function makeClient(sdk: OpenAiModule, options: OpenAiLlmOptions): OpenAI {
  const common = { maxRetries: options.maxRetries ?? 3, timeout: options.timeoutMs ?? 300_000 };
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

function toParams(
  request: LlmRequest,
  options: OpenAiLlmOptions,
  reasoning: boolean,
  promptMode: boolean,
): ChatCompletionCreateParamsNonStreaming {
  const messages = promptMode
    ? toPromptMessages(request.messages, request.tools, request.toolChoice)
    : request.messages;
  const params: ChatCompletionCreateParamsNonStreaming = {
    model: options.model,
    messages: toOpenAiMessages(messages, options.vision === true),
  };
  if (!promptMode && request.tools.length > 0) {
    params.tools = toolParams(request.tools);
    params.tool_choice = request.toolChoice;
  }
  if (reasoning) {
    if (options.maxTokens !== undefined) params.max_completion_tokens = options.maxTokens;
  } else {
    if (options.maxTokens !== undefined) params.max_tokens = options.maxTokens;
    if (options.temperature !== undefined) params.temperature = options.temperature;
  }
  return params;
}

// An agent's tool list is fixed for its life: converted once, not once per request.
const convertedTools = new WeakMap<readonly ToolSpec[], ChatCompletionFunctionTool[]>();

function toolParams(tools: readonly ToolSpec[]): ChatCompletionFunctionTool[] {
  let params = convertedTools.get(tools);
  if (!params) {
    params = tools.map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: { ...t.parameters } },
    }));
    convertedTools.set(tools, params);
  }
  return params;
}

const imagePart = (image: ImageData): ChatCompletionContentPart => ({
  type: 'image_url',
  image_url: { url: `data:${image.mimeType};base64,${image.base64}` },
});

/**
 * Our messages in the API's shape. Tool messages cannot carry images, so a tool's image goes
 * in a user message right after the block of tool results; models without vision get none.
 */
export function toOpenAiMessages(messages: readonly Message[], vision: boolean): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
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
  const memo = converted[vision ? 1 : 0];
  for (const message of messages) {
    if (message.role !== 'tool') flushToolImages();
    else if (vision && message.image) toolImages.push({ name: message.name, image: message.image });
    const known = memo.get(message);
    if (known) {
      out.push(known);
      continue;
    }
    const param = toOpenAiMessage(message, vision);
    memo.set(message, param);
    out.push(param);
  }
  flushToolImages();
  return out;
}

// Messages are immutable: each is converted once, not once per request.
const converted = [
  new WeakMap<Message, ChatCompletionMessageParam>(),
  new WeakMap<Message, ChatCompletionMessageParam>(),
] as const;

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

function fromCompletion(completion: ChatCompletion, promptMode: boolean): Result<LlmResponse, LlmError> {
  const message = completion.choices?.[0]?.message;
  if (!message)
    return err({
      kind: 'malformed_response',
      message: 'the response has no choices[0].message',
    });
  const usage = completion.usage
    ? {
        usage: {
          inputTokens: completion.usage.prompt_tokens,
          outputTokens: completion.usage.completion_tokens,
        },
      }
    : {};
  const text = message.content ?? '';
  if (promptMode) return ok({ ...parseToolCalls(text), ...usage });
  const toolCalls: ToolCall[] = [];
  for (const call of message.tool_calls ?? []) {
    if (call.type !== 'function') continue;
    // Some compatible servers send the arguments as an object instead of a JSON string.
    const args: unknown = call.function.arguments;
    toolCalls.push({
      id: call.id,
      name: call.function.name,
      arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}),
    });
  }
  return ok({ content: text, toolCalls, ...usage });
}

function toLlmError({ OpenAI }: OpenAiModule, error: unknown): LlmError {
  if (error instanceof OpenAI.APIUserAbortError) return { kind: 'aborted', message: 'the request was aborted' };
  if (error instanceof OpenAI.APIConnectionTimeoutError) return { kind: 'timeout', message: error.message };
  if (error instanceof OpenAI.APIConnectionError)
    return {
      kind: 'network',
      message: error.cause instanceof Error ? `${error.message} (${error.cause.message})` : error.message,
    };
  if (error instanceof OpenAI.APIError) {
    const status = error.status;
    const message = error.message;
    const base = status !== undefined ? { status, message } : { message };
    if (status === 429) return { kind: 'rate_limit', ...base };
    if (status === 401 || status === 403) return { kind: 'auth', ...base };
    if (status !== undefined && status >= 500) return { kind: 'server', ...base };
    if (error.code === 'context_length_exceeded' || /context length|maximum context|too many tokens/i.test(message)) {
      return { kind: 'context_length', ...base };
    }
    return { kind: 'bad_request', ...base };
  }
  // Raised before any request, e.g. no API key: a setup problem, not the model's.
  if (error instanceof OpenAI.OpenAIError) return { kind: 'config', message: error.message };
  if (error instanceof Error && error.name === 'AbortError') return { kind: 'aborted', message: error.message };
  return {
    kind: 'malformed_response',
    message: error instanceof Error ? error.message : String(error),
  };
}
