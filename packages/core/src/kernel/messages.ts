/** A chat message as the agent keeps it: plain data, safe to JSON round-trip. */
export type Role = 'system' | 'user' | 'assistant' | 'tool';

/** An image attached to a message (a tool screenshot, a user upload). */
export interface ImageData {
  readonly base64: string;
  readonly mimeType: string;
}

/** A tool call as the model asked for it; `arguments` is the raw JSON string the model wrote. */
export interface ToolCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}

export interface SystemMessage {
  readonly role: 'system';
  readonly content: string;
}

export interface UserMessage {
  readonly role: 'user';
  readonly content: string;
  readonly image?: ImageData;
}

/**
 * A piece of the model's reasoning as its provider returned it, kept with the reply so a port can
 * send it back where the API requires it (Anthropic's thinking blocks before tool results).
 */
export interface ReasoningPart {
  readonly text: string;
  /** The provider's signature of `text`, sent back unchanged. */
  readonly signature?: string;
  /** Reasoning the provider withheld, in its encrypted form (Anthropic's `redacted_thinking`), sent back unchanged. */
  readonly redacted?: string;
}

export interface AssistantMessage {
  readonly role: 'assistant';
  readonly content: string;
  readonly toolCalls?: readonly ToolCall[];
  readonly reasoning?: readonly ReasoningPart[];
}

export interface ToolMessage {
  readonly role: 'tool';
  readonly content: string;
  readonly toolCallId: string;
  readonly name: string;
  readonly image?: ImageData;
  /** What this observation shrinks to once newer ones of the same tool are in memory (see `keepFullObservations`). */
  readonly brief?: string;
}

export type Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

export const systemMessage = (content: string): SystemMessage => ({
  role: 'system',
  content,
});
export const userMessage = (content: string, image?: ImageData): UserMessage =>
  image ? { role: 'user', content, image } : { role: 'user', content };
export const assistantMessage = (
  content: string,
  toolCalls?: readonly ToolCall[],
  reasoning?: readonly ReasoningPart[],
): AssistantMessage => {
  const message: AssistantMessage =
    toolCalls && toolCalls.length > 0 ? { role: 'assistant', content, toolCalls } : { role: 'assistant', content };
  return reasoning && reasoning.length > 0 ? { ...message, reasoning } : message;
};

/** The last thing the assistant said in the current task (empty when it said nothing yet). */
export function lastAnswer(messages: readonly Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role === 'assistant' && message.content.trim() !== '') return message.content;
    if (message?.role === 'user') return '';
  }
  return '';
}
