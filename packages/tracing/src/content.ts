import type { Message, ToolCall } from '@openmanus/core';

/**
 * Messages in the shape the GenAI conventions give `gen_ai.input.messages` and
 * `gen_ai.output.messages` (role and parts), as JSON: recorded only with `captureContent`.
 */
type Part =
  | { readonly type: 'text'; readonly content: string }
  | { readonly type: 'tool_call'; readonly id: string; readonly name: string; readonly arguments: unknown }
  | { readonly type: 'tool_call_response'; readonly id: string; readonly response: string };

const text = (content: string): Part[] => (content === '' ? [] : [{ type: 'text', content }]);

/** The model's JSON arguments as an object when they parse, else the raw text it wrote. */
function argumentsOf(call: ToolCall): unknown {
  try {
    return JSON.parse(call.arguments);
  } catch {
    return call.arguments;
  }
}

const toolCallParts = (calls: readonly ToolCall[] = []): Part[] =>
  calls.map((call) => ({ type: 'tool_call', id: call.id, name: call.name, arguments: argumentsOf(call) }));

function partsOf(message: Message): Part[] {
  switch (message.role) {
    case 'system':
      return text(message.content);
    case 'assistant':
      return [...text(message.content), ...toolCallParts(message.toolCalls)];
    case 'tool':
      return [{ type: 'tool_call_response', id: message.toolCallId, response: message.content }];
    // Images are left out: a screenshot's base64 would dwarf the rest of the trace.
    case 'user':
      return text(message.content);
  }
}

/** The chat history of a request, without its system messages (those are `systemInstructions`). */
export const inputMessages = (messages: readonly Message[]): string =>
  JSON.stringify(messages.filter((m) => m.role !== 'system').map((m) => ({ role: m.role, parts: partsOf(m) })));

/** The system prompt(s) of a request, or undefined when it has none. */
export function systemInstructions(messages: readonly Message[]): string | undefined {
  const parts = messages.flatMap((m) => (m.role === 'system' ? partsOf(m) : []));
  return parts.length > 0 ? JSON.stringify(parts) : undefined;
}

/** One assistant reply as the model gave it. */
export const outputMessages = (content: string, toolCalls: readonly ToolCall[], finishReason: string): string =>
  JSON.stringify([
    { role: 'assistant', parts: [...text(content), ...toolCallParts(toolCalls)], finish_reason: finishReason },
  ]);

/** A run's task as a one-message list. */
export const taskMessages = (task: string): string => JSON.stringify([{ role: 'user', parts: text(task) }]);
