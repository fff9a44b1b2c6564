import type { ConverseRequest } from '@aws-sdk/client-bedrock-runtime';
import type { LlmRequest } from '../kernel/effects.js';
import { lazyPromise } from '../lazyModule.js';
import { messageOf } from '../messageOf.js';
import { err, ok, type Result } from '../result.js';
import { attempt } from './attempts.js';
import { toLlmError, unreadableReply } from './bedrockErrors.js';
import { type Json, toConverseMessages, toolConfigOf } from './bedrockMessages.js';
import { fromConverse, readConverseStream } from './bedrockReply.js';
import { limitConcurrency } from './concurrency.js';
import { retryable } from './failures.js';
import { type LlmCallOptions, type LlmError, type LlmPort, type LlmResponse, portComplete } from './llm.js';
import type { BedrockRuntimeClient, BedrockRuntimeClientConfig } from './optionalPeers.js';
import { type LlmPortOptions, portLimitsOf } from './portOptions.js';
import { priceOf } from './prices.js';
import { toPromptMessages } from './promptTools.js';
import type { Reading } from './replyParts.js';
import { DeltaListenerError } from './replyStream.js';
import type { RequestGuard } from './requestGuard.js';

export interface BedrockLlmOptions extends LlmPortOptions {
  /** A model id or inference profile: `us.anthropic.claude-3-7-sonnet-20250219-v1:0`, `amazon.nova-pro-v1:0`. */
  readonly model: string;
  /** The AWS region; default the one `endpoint` names, else the SDK's (`AWS_REGION`, the profile's). */
  readonly region?: string | undefined;
  /**
   * Where to send requests: a host as OpenManus's `base_url` gives it
   * (`bedrock-runtime.us-west-2.amazonaws.com`, taken as https) or a URL; default the region's.
   */
  readonly endpoint?: string;
  /** Default the AWS SDK's default chain (environment, shared files, SSO, the instance's role). */
  readonly credentials?: BedrockRuntimeClientConfig['credentials'];
  /**
   * Fields of the model's own API, sent as they are: Claude's `thinking` (`{ type: 'enabled',
   * budget_tokens }`) for its reasoning — with which a required tool call is not forced (`auto`)
   * and `temperature` is left out, as Claude takes neither.
   */
  readonly additionalModelRequestFields?: Readonly<Record<string, unknown>>;
  /**
   * Put cache points after the system prompt and after the request's stable prefix (see
   * `CacheHints`). Default on for Claude (from 3.5 Haiku and 3.7 Sonnet) and Nova, which cache.
   */
  readonly promptCache?: boolean;
  /** A ready-made client (e.g. with a request handler of your own); region, endpoint and credentials are then its. */
  readonly client?: BedrockRuntimeClient;
}

// Claude 3 and the first 3.5 Sonnets have no prompt caching on Bedrock.
const CACHING_MODEL = /anthropic\.claude-(?!3-(?:opus|sonnet|haiku)-|3-5-sonnet-)|amazon\.nova-/;

/** Whether Bedrock caches prompts for the model the id names (Claude from 3.5 Haiku and 3.7 Sonnet, Nova). */
export const cachesPrompts = (model: string): boolean => CACHING_MODEL.test(model);

const REGION = /^[a-z]{2}(?:-[a-z]+)+-\d+$/;

/**
 * The endpoint as a URL, and the region its host names: OpenManus's `base_url` is a bare host
 * (`bedrock-runtime.us-west-2.amazonaws.com`), a VPC endpoint's names it after its own label.
 */
export function bedrockEndpoint(endpoint: string): { readonly url: string; readonly region?: string } {
  const given = endpoint.trim();
  let url: URL | undefined;
  try {
    url = new URL(/^[a-z][a-z\d+.-]*:\/\//i.test(given) ? given : `https://${given}`);
  } catch {}
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || !url.hostname) {
    throw new TypeError(
      `endpoint must be a host (bedrock-runtime.us-west-2.amazonaws.com) or an http(s) URL, got ${JSON.stringify(endpoint)}`,
    );
  }
  const labels = url.hostname.split('.');
  const service = labels.findIndex((label) => label === 'bedrock-runtime' || label === 'bedrock-runtime-fips');
  const region = service >= 0 ? labels[service + 1] : undefined;
  const path = url.pathname === '/' ? '' : url.pathname;
  return { url: `${url.protocol}//${url.host}${path}`, ...(region && REGION.test(region) ? { region } : {}) };
}

type BedrockSdk = typeof import('@aws-sdk/client-bedrock-runtime');

/** A reply's stream broke off after the headers, where the SDK does not retry (internal: retried, or an `LlmError`). */
class BrokeOffMidway extends Error {
  override readonly name = 'BrokeOffMidway';
}

/** The LLM port on AWS Bedrock's Converse API (`@aws-sdk/client-bedrock-runtime`): Claude, Nova, Llama, Mistral, … */
export function createBedrockLlm(options: BedrockLlmOptions): LlmPort {
  if (typeof options.model !== 'string' || !options.model.trim()) {
    throw new TypeError('model must name a Bedrock model id or inference profile');
  }
  const limits = portLimitsOf(options);
  const endpoint = options.endpoint?.trim() ? bedrockEndpoint(options.endpoint) : undefined;
  const region = options.region ?? endpoint?.region;
  // The SDK is loaded on the first request, not when this module is imported.
  let ready: { readonly sdk: BedrockSdk; readonly client: BedrockRuntimeClient } | undefined;
  const connect = lazyPromise(async () => {
    const sdk = await import('@aws-sdk/client-bedrock-runtime');
    const client =
      options.client ??
      new sdk.BedrockRuntimeClient({
        maxAttempts: limits.maxRetries + 1,
        ...(region ? { region } : {}),
        ...(endpoint ? { endpoint: endpoint.url } : {}),
        ...(options.credentials ? { credentials: options.credentials } : {}),
      });
    ready = { sdk, client };
    return ready;
  });
  const promptMode = options.toolMode === 'prompt';
  const promptCache = options.promptCache ?? cachesPrompts(options.model);
  const reading: Reading = { promptMode, price: options.price ?? priceOf(options.model) };

  const port: LlmPort = {
    model: options.model,
    complete: portComplete(async (request: LlmRequest, callOptions: LlmCallOptions = {}) => {
      const input = toConverseRequest(request, options, promptMode, promptCache);
      let connection: NonNullable<typeof ready>;
      try {
        connection = ready ?? (await connect());
      } catch (error) {
        // Raised before any request, e.g. the SDK is not installed: a setup problem, not the model's.
        return err({
          kind: 'config',
          message: `the AWS SDK for Bedrock (@aws-sdk/client-bedrock-runtime) could not be loaded: ${messageOf(error)}`,
        });
      }
      const { sdk, client } = connection;
      const { onDelta } = callOptions;
      const send = async (guard: RequestGuard): Promise<Result<LlmResponse, LlmError>> => {
        const abort = { abortSignal: guard.signal };
        if (!options.stream) return ok(fromConverse(await client.send(new sdk.ConverseCommand(input), abort), reading));
        // The SDK makes the request (and its retries) and decodes the event stream; the reply is read here.
        const response = await client.send(new sdk.ConverseStreamCommand(input), abort);
        try {
          return ok(await readConverseStream(response.stream, { ...reading, arrived: guard.chunkArrived, onDelta }));
        } catch (error) {
          if (error instanceof DeltaListenerError) throw error;
          throw new BrokeOffMidway('the reply stream broke off', { cause: error });
        }
      };
      return attempt({
        signal: callOptions.signal,
        limits,
        streamListener: options.stream ? onDelta : undefined,
        send,
        failure,
      });
    }),
  };
  return limitConcurrency(port, limits.maxConcurrentRequests);
}

/**
 * What a failed attempt says, and whether it failed mid-way, to be tried again here: the SDK
 * retried what failed before the reply; a stream that broke off (cut, or an exception frame of
 * throttling, overload or a server error) or a body that could not be read whole was not.
 */
function failure(thrown: unknown): { readonly error: LlmError; readonly midway: boolean } {
  if (thrown instanceof BrokeOffMidway) {
    const error = toLlmError(thrown.cause);
    return { error, midway: retryable(error) };
  }
  return { error: toLlmError(thrown), midway: unreadableReply(thrown) };
}

function toConverseRequest(
  request: LlmRequest,
  options: BedrockLlmOptions,
  promptMode: boolean,
  promptCache: boolean,
): ConverseRequest {
  const messages = promptMode
    ? toPromptMessages(request.messages, request.tools, request.toolChoice)
    : request.messages;
  // The prompt mode may put a system prompt of its own in front: the stable prefix moves with it.
  const added = messages.length - request.messages.length;
  const stable = request.cache?.stableMessages;
  const prompt = toConverseMessages(messages, {
    vision: options.vision === true,
    stableMessages: promptCache && stable !== undefined && stable > 0 ? stable + added : undefined,
  });
  const thinking = options.additionalModelRequestFields?.thinking !== undefined;
  const toolChoice = thinking && request.toolChoice === 'required' ? 'auto' : request.toolChoice;
  const toolConfig = promptMode ? undefined : toolConfigOf(request.tools, toolChoice, prompt.messages);
  const inference = {
    ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}),
    ...(options.temperature !== undefined && !thinking ? { temperature: options.temperature } : {}),
  };
  return {
    modelId: options.model,
    messages: prompt.messages,
    ...(prompt.system ? { system: prompt.system } : {}),
    ...(toolConfig ? { toolConfig } : {}),
    ...(Object.keys(inference).length > 0 ? { inferenceConfig: inference } : {}),
    ...(options.additionalModelRequestFields
      ? { additionalModelRequestFields: options.additionalModelRequestFields as Json }
      : {}),
  };
}
