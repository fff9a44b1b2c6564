import type { ModelPrice } from './prices.js';
import { checkedMs } from './requestGuard.js';

/**
 * What the options of every LLM port share (`createOpenAiLlm`, `createAnthropicLlm`,
 * `createBedrockLlm`, `fromAiSdk`, `createGoogleLlm`): each port's options extend these with its
 * own, and say so where a port's default differs.
 */
export interface LlmPortOptions {
  /** The model as the provider names it; also the port's `model` (logs, records, the price table). */
  readonly model: string;
  /** Most output tokens of a reply; default the provider's. */
  readonly maxTokens?: number;
  /** The sampling temperature, sent only when given. */
  readonly temperature?: number;
  /**
   * The model accepts images: a user's and a tool's are sent (a tool's in a user message after
   * the tool results where the API takes none in them); else they are left out.
   */
  readonly vision?: boolean;
  /** `native` function calling, or `prompt` for models without it (calls written in the text: see `toolsPrompt`). */
  readonly toolMode?: 'native' | 'prompt';
  /**
   * Retries of what may pass — 408, 409, 429, 5xx, overloaded, a broken connection, a reply cut
   * mid-way or failing mid-stream — honouring the provider's Retry-After. Default 3.
   */
  readonly maxRetries?: number;
  /** Most time one request may take, in ms: the whole reply (body or stream) and its retries. Default 300 000. */
  readonly timeoutMs?: number;
  /** Streaming only: most time between two pieces of the reply, in ms. Default the smaller of 60 000 and `timeoutMs`. */
  readonly idleTimeoutMs?: number;
  /**
   * Stream the reply: its pieces reach `onDelta` (a run's `delta` items) as they arrive, the
   * response is the same, usage still reported. Also for servers that time out long non-streamed calls.
   */
  readonly stream?: boolean;
  /**
   * What the model costs, for each call's `usage.costUsd`; default the built-in table's price for
   * `model` (see `priceOf`). A model priced by neither: cost unknown.
   */
  readonly price?: ModelPrice;
  /**
   * Most requests of this port in flight at once (default 32; `Infinity` for no limit): the rest
   * wait their turn, so many runs sharing a port share its connections instead of opening one each.
   */
  readonly maxConcurrentRequests?: number;
}

/** A port's limits, with their defaults. */
export interface PortLimits {
  readonly timeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly maxRetries: number;
  readonly maxConcurrentRequests: number;
}

/** The options' limits, checked: a bad one throws when the port is made, not at its first request. */
export function portLimitsOf(
  options: Pick<LlmPortOptions, 'timeoutMs' | 'idleTimeoutMs' | 'maxRetries' | 'maxConcurrentRequests'>,
): PortLimits {
  const timeoutMs = checkedMs('timeoutMs', options.timeoutMs) ?? 300_000;
  const idleTimeoutMs = checkedMs('idleTimeoutMs', options.idleTimeoutMs) ?? Math.min(60_000, timeoutMs);
  const maxRetries = options.maxRetries ?? 3;
  if (!Number.isInteger(maxRetries) || maxRetries < 0) {
    throw new RangeError(`maxRetries must be a non-negative integer, got ${maxRetries}`);
  }
  // Checked where the port is limited (limitConcurrency).
  return { timeoutMs, idleTimeoutMs, maxRetries, maxConcurrentRequests: options.maxConcurrentRequests ?? 32 };
}
