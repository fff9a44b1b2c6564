import type {
  Message as BedrockMessage,
  ContentBlock,
  ImageBlock,
  SystemContentBlock,
  Tool,
  ToolConfiguration,
  ToolInputSchema,
  ToolResultContentBlock,
} from '@aws-sdk/client-bedrock-runtime';
import type { ToolChoice } from '../kernel/agent.js';
import type { ImageData, Message, ReasoningPart, ToolCall } from '../kernel/messages.js';
import type { ToolSpec } from '../kernel/tool.js';
import { callInput } from './callInput.js';
import { memoized } from './memo.js';

/** What a request becomes in Converse's shape: the system prompt, the turns, and the tools. */
export interface ConversePrompt {
  readonly system: SystemContentBlock[] | undefined;
  readonly messages: BedrockMessage[];
  readonly toolConfig: ToolConfiguration | undefined;
}

export interface PromptSettings {
  /** The model sees images: user and tool images go as image blocks (else they are left out). */
  readonly vision: boolean;
  /**
   * Where the stable prefix ends (the count of leading messages the next request repeats), to put
   * a cache point after it and after the system prompt; `undefined` for no cache points.
   */
  readonly stableMessages: number | undefined;
}

const CACHE_POINT = { cachePoint: { type: 'default' } } as const;

/** A JSON value as the SDK types it (a tool's input, its schema). */
export type Json = ToolInputSchema.JsonMember['json'];

/**
 * Our messages in Converse's shape. The leading system messages are the `system` prompt (a later
 * one, which the API has no place for, is said as a user's text where it was). Converse wants
 * user and assistant turns alternating: what follows the same role joins its turn, so a step's
 * tool results are one user turn of toolResult blocks, each answering its call by its own id (the
 * next-step prompt after them). Blank texts, which Converse refuses, are left out.
 */
export function toConverseMessages(
  messages: readonly Message[],
  { vision, stableMessages }: PromptSettings,
): Omit<ConversePrompt, 'toolConfig'> {
  const system: SystemContentBlock[] = [];
  const turns: { role: 'user' | 'assistant'; content: ContentBlock[] }[] = [];
  let leading = 0;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i] as Message;
    if (message.role === 'system' && leading === i) {
      leading++;
      if (message.content.trim()) system.push({ text: message.content });
    } else {
      const blocks = blocksOf(message, vision);
      const role = message.role === 'assistant' ? 'assistant' : 'user';
      let turn = turns[turns.length - 1];
      if (blocks.length > 0 && turn?.role !== role) {
        turn = { role, content: [] };
        turns.push(turn);
      }
      turn?.content.push(...blocks);
    }
    // A cache point after the prefix's last block, where there is a block before it to cache.
    if (i === (stableMessages ?? 0) - 1 && i >= leading) turns[turns.length - 1]?.content.push(CACHE_POINT);
  }
  // The system prompt (and the tools before it) gets its own: it stays cached when the history shrinks.
  if (stableMessages !== undefined && stableMessages >= leading && system.length > 0) system.push(CACHE_POINT);
  return { system: system.length > 0 ? system : undefined, messages: turns };
}

// Messages are immutable: each is converted once, not at every request of its run (with and without vision).
const seen = memoized((message: Message) => convert(message, true));
const blind = memoized((message: Message) => convert(message, false));

const blocksOf = (message: Message, vision: boolean): readonly ContentBlock[] => (vision ? seen : blind)(message);

function convert(message: Message, vision: boolean): ContentBlock[] {
  switch (message.role) {
    case 'system':
      return texts(message.content);
    case 'user':
      return [...texts(message.content), ...(vision && message.image ? [imageBlock(message.image)] : [])];
    case 'assistant':
      return [
        ...(message.reasoning ?? []).map(reasoningBlock),
        ...texts(message.content),
        ...(message.toolCalls ?? []).map(toolUseBlock),
      ];
    case 'tool': {
      const content: ToolResultContentBlock[] = [
        ...texts(message.content),
        ...(vision && message.image ? [imageBlock(message.image)] : []),
      ];
      // A result must say something: an empty one says so.
      if (content.length === 0) content.push({ text: '(no output)' });
      return [{ toolResult: { toolUseId: message.toolCallId, content } }];
    }
  }
}

const texts = (text: string): { text: string }[] => (text.trim() ? [{ text }] : []);

/** Converse takes these four; another type goes as a note of what was left out. */
const IMAGE_FORMATS: Readonly<Record<string, ImageBlock['format']>> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

function imageBlock(image: ImageData): { image: ImageBlock } | { text: string } {
  const format = IMAGE_FORMATS[image.mimeType.toLowerCase()];
  if (!format) return { text: `(an image of type ${image.mimeType}, which Bedrock does not take, was left out)` };
  return { image: { format, source: { bytes: Buffer.from(image.base64, 'base64') } } };
}

function reasoningBlock(part: ReasoningPart): ContentBlock {
  if (part.redacted !== undefined) {
    return { reasoningContent: { redactedContent: Buffer.from(part.redacted, 'base64') } };
  }
  const signed = part.signature !== undefined ? { signature: part.signature } : {};
  return { reasoningContent: { reasoningText: { text: part.text, ...signed } } };
}

/** A call as Converse sends it back, its input an object (see `callInput`). */
function toolUseBlock(call: ToolCall): ContentBlock {
  return { toolUse: { toolUseId: call.id, name: call.name, input: callInput(call) as Json } };
}

// An agent's tool list is fixed for its life: converted once, not once per request.
const toolSpecs = memoized((tools: readonly ToolSpec[]): Tool[] =>
  tools.map((t) => ({
    toolSpec: { name: t.name, description: t.description, inputSchema: { json: { ...t.parameters } as Json } },
  })),
);

const hasToolBlocks = (messages: readonly BedrockMessage[]) =>
  messages.some((m) => m.content?.some((b) => b.toolUse !== undefined || b.toolResult !== undefined));

/**
 * The tools and how the model may use them: `auto`, `required` as `any`, and `none` as no tools
 * — or, where the history holds tool blocks (Converse then wants a `toolConfig`), the tools
 * listed without a choice. A history of calls to tools no longer given lists their names.
 */
export function toolConfigOf(
  tools: readonly ToolSpec[],
  toolChoice: ToolChoice,
  messages: readonly BedrockMessage[],
): ToolConfiguration | undefined {
  const needed = hasToolBlocks(messages);
  if (toolChoice === 'none' && !needed) return undefined;
  const specs = tools.length > 0 ? toolSpecs(tools) : needed ? pastTools(messages) : [];
  if (specs.length === 0) return undefined;
  if (toolChoice === 'none') return { tools: specs };
  return { tools: specs, toolChoice: toolChoice === 'required' ? { any: {} } : { auto: {} } };
}

function pastTools(messages: readonly BedrockMessage[]): Tool[] {
  const names = new Set<string>();
  for (const message of messages)
    for (const block of message.content ?? []) if (block.toolUse?.name) names.add(block.toolUse.name);
  return [...names].map((name) => ({
    toolSpec: { name, description: 'No longer available.', inputSchema: { json: { type: 'object' } } },
  }));
}
