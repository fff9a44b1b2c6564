import type {
  Message,
  MessageCreateParamsNonStreaming,
  MessageCreateParamsStreaming,
} from '@anthropic-ai/sdk/resources/messages';
import type { LlmRequest } from '../kernel/effects.js';
import { lazyPromise } from '../lazyModule.js';
import { messageOf } from '../messageOf.js';
import { err, ok, type Result } from '../result.js';
import { toAnthropicPrompt, toolChoiceParam, toolParams } from './anthropicMessages.js';
import { fromMessage, readAnthropicStream } from './anthropicReply.js';
import { attempt } from './attempts.js';
import { limitConcurrency } from './concurrency.js';
import { CONTEXT_LENGTH, failureFields, OVERLOADED, replyFailure, retryAfterMsOf } from './failures.js';
import {
  type LlmCallOptions,
  type LlmError,
  type LlmErrorKind,
  type LlmPort,
  type LlmResponse,
  portComplete,
} from './llm.js';
import type { Anthropic } from './optionalPeers.js';
import { type LlmPortOptions, portLimitsOf } from './portOptions.js';
import { priceOf } from './prices.js';
import { toPromptMessages } from './promptTools.js';
import { ReplyError, replyErrorOf } from './replyError.js';
import type { Reading } from './replyParts.js';
import type { RequestGuard } from './requestGuard.js';
import { failedMidway, unanswered } from './stainlessErrors.js';

export interface AnthropicLlmOptions extends LlmPortOptions {
  /** A Claude model, e.g. `claude-sonnet-4-5`. */
  readonly model: string;
  /** Default: the SDK's (`ANTHROPIC_API_KEY`). */
  readonly apiKey?: string | undefined;
  /** Default: the SDK's (`ANTHROPIC_BASE_URL`, else Anthropic's API). The SDK adds `/v1/messages`. */
  readonly baseURL?: string | undefined;
  /**
   * Most output tokens of a reply (the API requires a limit): default 8192, and with `thinking`
   * the thinking budget plus 8192 (the budget is part of the limit).
   */
  readonly maxTokens?: number;
  /**
   * Sent only when given, and never with `thinking` (the API takes none then). The SDK no longer
   * types it and newer models refuse it: for older models only.
   */
  readonly temperature?: number;
  /** A ready-made client, e.g. one with a custom fetch. */
  readonly client?: Anthropic;
  /**
   * Extended thinking, with this many tokens for it (at least 1024, fewer than `maxTokens`).
   * The thinking comes back as the reply's `reasoning` and is sent back with it, as the API requires.
   */
  readonly thinking?: { readonly budgetTokens: number };
}

const DEFAULT_MAX_TOKENS = 8192;
const MIN_THINKING_BUDGET = 1024;

/** The LLM port on Anthropic's Messages API, through the `@anthropic-ai/sdk` SDK (an optional peer dependency). */
export function createAnthropicLlm(options: AnthropicLlmOptions): LlmPort {
  const limits = portLimitsOf(options);
  const budget = options.thinking?.budgetTokens;
  const maxTokens = options.maxTokens ?? (budget ?? 0) + DEFAULT_MAX_TOKENS;
  if (!Number.isInteger(maxTokens) || maxTokens < 1) {
    throw new RangeError(`maxTokens must be a positive integer, got ${maxTokens}`);
  }
  if (budget !== undefined && (!Number.isInteger(budget) || budget < MIN_THINKING_BUDGET || budget >= maxTokens)) {
    throw new RangeError(
      `thinking.budgetTokens must be an integer of at least ${MIN_THINKING_BUDGET} and below maxTokens (${maxTokens}), got ${budget}`,
    );
  }
  // The SDK is loaded on the first request, not when this module is imported.
  let ready: Connection | undefined;
  const connect = lazyPromise(async (): Promise<Connection> => {
    const sdk = await import('@anthropic-ai/sdk');
    // The SDK's timeout bounds each attempt's wait for headers; the request's deadline bounds the rest.
    const client =
      options.client ??
      new sdk.Anthropic({
        apiKey: options.apiKey,
        baseURL: options.baseURL,
        maxRetries: limits.maxRetries,
        timeout: limits.timeoutMs,
      });
    ready = { sdk, messages: client.messages };
    return ready;
  });
  const setup: Setup = {
    model: options.model,
    maxTokens,
    temperature: options.temperature,
    budget,
    vision: options.vision === true,
    promptMode: options.toolMode === 'prompt',
    stream: options.stream === true,
  };
  const reading: Reading = { promptMode: setup.promptMode, price: options.price ?? priceOf(options.model) };

  const port: LlmPort = {
    model: options.model,
    complete: portComplete(async (request: LlmRequest, callOptions: LlmCallOptions = {}) => {
      const params = toParams(request, setup);
      let connection: Connection;
      try {
        connection = ready ?? (await connect());
      } catch (error) {
        // Raised before any request, e.g. the SDK is not installed: a setup problem, not the model's.
        return err({ kind: 'config', message: `the Anthropic SDK could not be loaded: ${messageOf(error)}` });
      }
      const { sdk, messages } = connection;
      const { onDelta } = callOptions;
      const send = async (guard: RequestGuard): Promise<Result<LlmResponse, LlmError>> => {
        if (!params.stream) {
          const message: Message = await messages.create(params, { signal: guard.signal });
          // A proxy may answer 200 with an error in place of the message.
          const { error } = message as { error?: unknown };
          if (error) throw replyErrorOf(error);
          return ok(fromMessage(message, reading));
        }
        // The SDK makes the request (and its retries); the events are read here (see readAnthropicStream).
        const response = await messages.create(params, { signal: guard.signal }).asResponse();
        return ok(await readAnthropicStream(response.body, { ...reading, arrived: guard.chunkArrived, onDelta }));
      };
      return attempt({
        signal: callOptions.signal,
        limits,
        streamListener: setup.stream ? onDelta : undefined,
        send,
        failure: (thrown) => {
          const error = toLlmError(sdk, thrown);
          return { error, midway: failedMidway(sdk, thrown, error) };
        },
      });
    }),
  };
  return limitConcurrency(port, limits.maxConcurrentRequests);
}

type AnthropicModule = typeof import('@anthropic-ai/sdk');

interface Connection {
  readonly sdk: AnthropicModule;
  readonly messages: Anthropic['messages'];
}

/** What the port's options make of every request. */
interface Setup {
  readonly model: string;
  readonly maxTokens: number;
  readonly temperature: number | undefined;
  readonly budget: number | undefined;
  readonly vision: boolean;
  readonly promptMode: boolean;
  readonly stream: boolean;
}

/** The request's body; `temperature`, which the SDK no longer types, is sent as given. */
type Params = (MessageCreateParamsNonStreaming | MessageCreateParamsStreaming) & { temperature?: number };

function toParams(request: LlmRequest, setup: Setup): Params {
  const { promptMode, budget } = setup;
  const messages = promptMode
    ? toPromptMessages(request.messages, request.tools, request.toolChoice)
    : request.messages;
  const cached = request.cache !== undefined;
  const stable = request.cache?.stableMessages;
  // The prompt tool mode may put a system message of its own in front: the prefix moves with it.
  const stableMessages = stable === undefined ? undefined : stable + messages.length - request.messages.length;
  const prompt = toAnthropicPrompt(messages, { vision: setup.vision, stableMessages });
  const params: Params = setup.stream
    ? { model: setup.model, max_tokens: setup.maxTokens, messages: prompt.messages, stream: true }
    : { model: setup.model, max_tokens: setup.maxTokens, messages: prompt.messages };
  if (prompt.system) params.system = prompt.system;
  if (!promptMode && request.tools.length > 0) {
    params.tools = toolParams(request.tools, cached);
    params.tool_choice = toolChoiceParam(request.toolChoice, budget !== undefined);
  }
  if (budget !== undefined) params.thinking = { type: 'enabled', budget_tokens: budget };
  else if (setup.temperature !== undefined) params.temperature = setup.temperature;
  return params;
}

/** Anthropic's error types, by the kind of ours each is. */
const ERROR_TYPES: Readonly<Record<string, LlmErrorKind>> = {
  rate_limit_error: 'rate_limit',
  overloaded_error: 'overloaded',
  authentication_error: 'auth',
  permission_error: 'auth',
  api_error: 'server',
  timeout_error: 'server',
  invalid_request_error: 'bad_request',
  not_found_error: 'bad_request',
  request_too_large: 'bad_request',
  billing_error: 'bad_request',
};

const NO_CREDENTIALS = /^Could not resolve authentication method/;

// "prompt is too long: 215000 tokens > 200000 maximum"; other providers' wording too.
const TOO_LONG = /prompt is too long|input is too long/i;

/** The kind of a failure the API described by status (where it came before the reply) and type. */
function kindOf(status: number | undefined, type: string | null | undefined, message: string): LlmErrorKind {
  if (status === 429) return 'rate_limit';
  if (status === 401 || status === 403) return 'auth';
  if (status === 529 || type === 'overloaded_error' || OVERLOADED.test(message)) return 'overloaded';
  if (TOO_LONG.test(message) || CONTEXT_LENGTH.test(message)) return 'context_length';
  const named = type ? ERROR_TYPES[type] : undefined;
  if (status !== undefined && status >= 500) return 'server';
  if (named) return named;
  // Sent in the stream without a type we know: the API's own trouble, as for a 5xx.
  return status === undefined || status >= 500 ? 'server' : 'bad_request';
}

function toLlmError(sdk: AnthropicModule, error: unknown): LlmError {
  const before = unanswered(sdk, error);
  if (before) return before;
  if (error instanceof sdk.APIError) {
    const { status } = error;
    // The API's own message, without the SDK's status and JSON around it.
    const message = error.apiMessage ?? error.message;
    return {
      kind: kindOf(status, error.type, message),
      ...failureFields(message, status, retryAfterMsOf(error.headers)),
    };
  }
  // The SDK refusing before any request (no credentials, which it throws as a plain Error): a setup problem.
  if (error instanceof sdk.AnthropicError || (error instanceof Error && NO_CREDENTIALS.test(error.message)))
    return { kind: 'config', message: error.message };
  if (error instanceof ReplyError) {
    const type = typeof error.type === 'string' ? error.type : undefined;
    return { kind: kindOf(undefined, type, error.message), message: error.message };
  }
  return replyFailure(error);
}
