import type {
  JSONObject,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV4FilePart,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4ReasoningPart,
  LanguageModelV4ToolCallPart,
  LanguageModelV4ToolResultOutput,
  LanguageModelV4ToolResultPart,
  SharedV4ProviderOptions,
} from '@ai-sdk/provider';
import type { ImageData, Message, ReasoningPart, ToolCall, ToolMessage } from '../kernel/messages.js';
import { callInput } from './callInput.js';

/**
 * The key a provider reads its `providerOptions` (and writes its metadata) under, from the
 * model's `provider`: `anthropic.messages` → `anthropic`, `google.generative-ai` → `google`,
 * `amazon-bedrock` → `bedrock`.
 */
export function optionsKeyOf(provider: string): string {
  const first = provider.split('.')[0] ?? provider;
  return first === 'amazon-bedrock' ? 'bedrock' : first;
}

/** Gemini names a reasoning signature `thoughtSignature`; Anthropic and Bedrock `signature`. */
const isGoogle = (key: string) => key === 'google' || key === 'vertex';

export interface PromptSettings {
  /** The model sees images: user and tool images go as file parts (else they are left out). */
  readonly vision: boolean;
  /** See `optionsKeyOf`. */
  readonly optionsKey: string;
  /** How many leading messages are the stable prefix (see `CacheHints`): the cache mark goes on the last of them. */
  readonly stableMessages: number;
}

/**
 * The messages as the AI SDK's prompt (its current specification, v4): one prompt message per
 * message, but for a step's tool results, which go in one tool message (Gemini wants all of a
 * turn's function responses in one turn). The cache mark goes on the stable prefix's last message
 * (on a tool result, on its part: its tool message may go on past the prefix).
 * Providers take system messages only at the start (Gemini refuses the request otherwise): one later in
 * the history (an MCP server's instructions, a host's note) goes as the user's text in its place.
 */
export function toAiSdkPrompt(messages: readonly Message[], settings: PromptSettings): LanguageModelV4Prompt {
  const mark = cacheMark(settings.optionsKey);
  const leading = messages.findIndex((message) => message.role !== 'system');
  const prompt: LanguageModelV4Message[] = [];
  messages.forEach((message, index) => {
    const marked = mark && index === settings.stableMessages - 1 ? mark : undefined;
    if (message.role === 'tool') {
      const result = toolResult(message, settings.vision);
      const part = marked ? { ...result, providerOptions: marked } : result;
      const last = prompt.at(-1);
      if (last?.role === 'tool') last.content.push(part);
      else prompt.push({ role: 'tool', content: [part] });
      return;
    }
    const inPlace: Exclude<Message, { role: 'tool' }> =
      message.role === 'system' && leading !== -1 && index > leading
        ? { role: 'user', content: message.content }
        : message;
    const converted = toAiSdkMessage(inPlace, settings);
    prompt.push(marked ? { ...converted, providerOptions: marked } : converted);
  });
  return prompt;
}

/**
 * Where the stable prefix ends, for providers with explicit prompt caching: Anthropic's cache
 * control and Bedrock's cache point (the others cache on their own).
 */
function cacheMark(key: string): SharedV4ProviderOptions | undefined {
  if (key === 'anthropic') return { anthropic: { cacheControl: { type: 'ephemeral' } } };
  if (key === 'bedrock') return { bedrock: { cachePoint: { type: 'default' } } };
  return undefined;
}

const filePart = (image: ImageData): LanguageModelV4FilePart => ({
  type: 'file',
  mediaType: image.mimeType,
  data: { type: 'data', data: image.base64 },
});

function toAiSdkMessage(
  message: Exclude<Message, { role: 'tool' }>,
  { vision, optionsKey }: PromptSettings,
): LanguageModelV4Message {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return {
        role: 'user',
        content: [
          { type: 'text', text: message.content },
          ...(vision && message.image ? [filePart(message.image)] : []),
        ],
      };
    case 'assistant':
      return {
        role: 'assistant',
        content: assistantContent(message.content, message.toolCalls, message.reasoning, optionsKey),
      };
  }
}

function toolResult(message: ToolMessage, vision: boolean): LanguageModelV4ToolResultPart {
  const output: LanguageModelV4ToolResultOutput =
    vision && message.image
      ? { type: 'content', value: [{ type: 'text', text: message.content }, filePart(message.image)] }
      : { type: 'text', value: message.content };
  return { type: 'tool-result', toolCallId: message.toolCallId, toolName: message.name, output };
}

/**
 * The reply as it was, reasoning first, sent back with its signatures. For Gemini, a signature
 * without text is the one its reply carried on a function call (see `signedToolCalls` in
 * aiSdk.ts): it goes back on the call, in order.
 */
function assistantContent(
  text: string,
  toolCalls: readonly ToolCall[] = [],
  reasoning: readonly ReasoningPart[] = [],
  key: string,
): Extract<LanguageModelV4Message, { role: 'assistant' }>['content'] {
  const callSignatures: string[] = [];
  const parts: Extract<LanguageModelV4Message, { role: 'assistant' }>['content'] = [];
  for (const part of reasoning) {
    if (isGoogle(key) && part.text === '' && part.signature && !part.redacted) callSignatures.push(part.signature);
    else parts.push(reasoningPart(part, key));
  }
  // Left over: more signatures than calls (a reply that signed its text), sent as signed reasoning.
  for (const signature of callSignatures.splice(toolCalls.length))
    parts.push(reasoningPart({ text: '', signature }, key));
  if (text) parts.push({ type: 'text', text });
  toolCalls.forEach((call, i) => {
    const signature = callSignatures[i];
    const part: LanguageModelV4ToolCallPart = {
      type: 'tool-call',
      toolCallId: call.id,
      toolName: call.name,
      input: callInput(call),
    };
    parts.push(signature ? { ...part, providerOptions: { [key]: { thoughtSignature: signature } } } : part);
  });
  return parts;
}

function reasoningPart(part: ReasoningPart, key: string): LanguageModelV4ReasoningPart {
  const metadata: JSONObject = part.redacted
    ? { redactedData: part.redacted }
    : part.signature
      ? { [isGoogle(key) ? 'thoughtSignature' : 'signature']: part.signature }
      : {};
  return Object.keys(metadata).length > 0
    ? { type: 'reasoning', text: part.text, providerOptions: { [key]: metadata } }
    : { type: 'reasoning', text: part.text };
}

/** The prompt in the previous specification's shape (v3: file data inline, tool images as `image-data`). */
export function toV3Prompt(prompt: LanguageModelV4Prompt): LanguageModelV3Prompt {
  return prompt.map((message): LanguageModelV3Message => {
    const { providerOptions } = message;
    const marked = providerOptions ? { providerOptions } : {};
    if (message.role === 'system') return message;
    if (message.role === 'user') return { role: 'user', content: message.content.map(v3UserPart), ...marked };
    // Ours holds reasoning, text and tool calls only: the parts v3 has too.
    if (message.role === 'assistant') {
      return { role: 'assistant', content: message.content.filter(isV3AssistantPart), ...marked };
    }
    return { role: 'tool', content: message.content.filter(isToolResult).map(v3ToolResult), ...marked };
  });
}

type V4UserPart = Extract<LanguageModelV4Message, { role: 'user' }>['content'][number];
type V4AssistantPart = Extract<LanguageModelV4Message, { role: 'assistant' }>['content'][number];
type V4ToolPart = Extract<LanguageModelV4Message, { role: 'tool' }>['content'][number];
type V3UserPart = Extract<LanguageModelV3Message, { role: 'user' }>['content'][number];
type V3ContentItem = Extract<V3ToolResultPart['output'], { type: 'content' }>['value'][number];
type V3ToolResultPart = Extract<
  Extract<LanguageModelV3Message, { role: 'tool' }>['content'][number],
  { type: 'tool-result' }
>;

const v3UserPart = (part: V4UserPart): V3UserPart =>
  part.type === 'file' ? { ...part, data: inlineData(part) } : part;

const isV3AssistantPart = (
  part: V4AssistantPart,
): part is Extract<V4AssistantPart, { type: 'text' | 'reasoning' | 'tool-call' }> =>
  part.type === 'text' || part.type === 'reasoning' || part.type === 'tool-call';

const isToolResult = (part: V4ToolPart): part is Extract<V4ToolPart, { type: 'tool-result' }> =>
  part.type === 'tool-result';

function v3ToolResult(part: Extract<V4ToolPart, { type: 'tool-result' }>): V3ToolResultPart {
  const { output } = part;
  if (output.type !== 'content') return { ...part, output };
  const value: V3ContentItem[] = [];
  for (const item of output.value) {
    if (item.type === 'text') value.push(item);
    else if (item.type === 'file')
      value.push({ type: 'image-data', data: inlineData(item), mediaType: item.mediaType });
  }
  return { ...part, output: { type: 'content', value } };
}

/** A file part's data as v3 takes it: the base64 text itself. */
function inlineData(part: Pick<LanguageModelV4FilePart, 'data'>): string {
  const { data } = part;
  if (data.type === 'data' && typeof data.data === 'string') return data.data;
  // Our messages only carry inline base64 images: nothing else reaches here.
  throw new Error(`a ${data.type} file part cannot be sent to a v3 model`);
}
