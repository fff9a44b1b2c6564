import type { LlmUsage } from '../kernel/events.js';
import type { ReasoningPart, ToolCall } from '../kernel/messages.js';
import type { LlmFinishReason, LlmResponse } from './llm.js';
import { callCost, type ModelPrice } from './prices.js';
import { parseToolCalls } from './promptTools.js';

/** How a port reads a reply: tool calls from the text (prompt mode), and the price of its usage. */
export interface Reading {
  readonly promptMode: boolean;
  readonly price: ModelPrice | undefined;
}

/** A reply as a port read it from its provider, streamed or whole, before the port's reading of it. */
export interface ReplyParts {
  readonly text: string;
  readonly toolCalls: readonly ToolCall[];
  readonly reasoning?: readonly ReasoningPart[];
  /** Why the provider says the reply ended, in its own words (a key of its stop reasons). */
  readonly stopReason?: string | null | undefined;
  /** The usage it reported, in ours (unpriced). */
  readonly usage?: LlmUsage | undefined;
}

/** A provider's reasons for ending a reply, by the finish reason each is; any other is `other`. */
export type StopReasons = Readonly<Record<string, LlmFinishReason>>;

/**
 * The reply as the port answers it: in the prompt tool mode its calls parsed from the text, the
 * provider's stop reason as ours, its usage priced, its reasoning where it gave any.
 */
export function toResponse(parts: ReplyParts, reading: Reading, stopReasons: StopReasons): LlmResponse {
  const { stopReason, usage, reasoning } = parts;
  const reply = reading.promptMode ? parseToolCalls(parts.text) : { content: parts.text, toolCalls: parts.toolCalls };
  // Own keys only: a reason a server made up (`constructor`) is not the table's.
  const reported = stopReason
    ? Object.hasOwn(stopReasons, stopReason)
      ? stopReasons[stopReason]
      : 'other'
    : undefined;
  // In the prompt tool mode the provider saw no tools: calls written in the text are why it stopped.
  const finishReason = reported === 'stop' && reply.toolCalls.length > 0 ? 'tool_calls' : reported;
  return {
    ...reply,
    ...(usage ? { usage: priced(usage, reading.price) } : {}),
    ...(finishReason ? { finishReason } : {}),
    ...(reasoning && reasoning.length > 0 ? { reasoning } : {}),
  };
}

/** The usage with its cost; an unpriced call carries no cost at all: absent is unknown. */
function priced(usage: LlmUsage, price: ModelPrice | undefined): LlmUsage {
  const costUsd = callCost(usage, price);
  return costUsd === null ? usage : { ...usage, costUsd };
}

/** A call's input as JSON text: most APIs send an object; a non-conformant server may send the JSON text. */
export const argumentsOf = (input: unknown): string =>
  typeof input === 'string' ? input : JSON.stringify(input ?? {});

/** A thought as the reply gives it back, with its signature where it has one. */
export const thought = (text: string, signature: string | undefined): ReasoningPart =>
  signature ? { text, signature } : { text };
