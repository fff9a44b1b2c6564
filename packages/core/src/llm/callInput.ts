import type { ToolCall } from '../kernel/messages.js';
import { memoized } from './memo.js';

// Every request of a run sends its whole history again, and with it each past call's input: each is
// parsed once (the bench's 400-step loop on the AI SDK port spent its growth re-parsing them).
/**
 * A call's arguments as the object the providers that take input as an object send (Anthropic,
 * Bedrock, the AI SDK). Arguments that are not a JSON object — the model wrote them malformed, and
 * its tool result said so — go as `{}`: the provider would refuse the whole request over them.
 */
export const callInput = memoized((call: ToolCall): Readonly<Record<string, unknown>> => {
  try {
    const value: unknown = JSON.parse(call.arguments || '{}');
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {}
  return {};
});
