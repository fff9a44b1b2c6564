import type {
  Base64ImageSource,
  ContentBlockParam,
  ImageBlockParam,
  MessageParam,
  TextBlockParam,
  Tool,
  ToolChoice as WireToolChoice,
} from '@anthropic-ai/sdk/resources/messages';
import type { ToolChoice } from '../kernel/agent.js';
import type { ImageData, Message, ReasoningPart } from '../kernel/messages.js';
import type { ToolSpec } from '../kernel/tool.js';
import { callInput } from './callInput.js';
import { memoized } from './memo.js';

/** What a request's messages become: the system prompt, and the turns of the conversation. */
export interface AnthropicPrompt {
  readonly system: TextBlockParam[] | undefined;
  readonly messages: MessageParam[];
}

const EPHEMERAL = { type: 'ephemeral' } as const;

/** A block that can carry a cache breakpoint (thinking blocks cannot). */
const markable = (block: ContentBlockParam): boolean => block.type !== 'thinking' && block.type !== 'redacted_thinking';

/**
 * Our messages in the Messages API's shape. The leading system messages are the `system` prompt
 * (a later one, which the API has no place for, is said as a user's text where it was). The API
 * wants user and assistant turns alternating: what follows the same role joins its turn, so a
 * step's tool results are one user turn of tool_result blocks (the next-step prompt after them).
 * With `stableMessages` (the prefix the next request repeats), cache breakpoints go on the
 * system prompt's last block and on the prefix's last block: the API caches up to each.
 */
export function toAnthropicPrompt(
  messages: readonly Message[],
  { vision, stableMessages }: { readonly vision: boolean; readonly stableMessages: number | undefined },
): AnthropicPrompt {
  const system: ContentBlockParam[] = [];
  const turns: { role: 'user' | 'assistant'; content: ContentBlockParam[] }[] = [];
  const cached = stableMessages ?? 0;
  // The last block of the stable prefix, as a block list and the place in it.
  let stableEnd: { blocks: ContentBlockParam[]; at: number } | undefined;
  let leading = 0;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i] as Message;
    const prompt = message.role === 'system' && leading === i;
    if (prompt) leading++;
    const blocks = blocksOf(message, vision);
    let into: ContentBlockParam[] = system;
    if (!prompt && blocks.length > 0) {
      const role = message.role === 'assistant' ? 'assistant' : 'user';
      let turn = turns[turns.length - 1];
      if (turn?.role !== role) {
        turn = { role, content: [] };
        turns.push(turn);
      }
      into = turn.content;
    }
    for (const block of blocks) {
      into.push(block);
      if (i < cached && markable(block)) stableEnd = { blocks: into, at: into.length - 1 };
    }
  }
  const marks = stableEnd ? [stableEnd] : [];
  // The system prompt whole in the prefix: a breakpoint of its own, still a hit when the history changes.
  if (system.length > 0 && leading <= cached) marks.push({ blocks: system, at: system.length - 1 });
  for (const { blocks, at } of marks) {
    // A copy (the converted blocks are kept for the next request); never a thinking block (see markable).
    blocks[at] = { ...(blocks[at] as ContentBlockParam), cache_control: EPHEMERAL } as ContentBlockParam;
  }
  // A system message converts to text blocks only.
  return { system: system.length > 0 ? (system as TextBlockParam[]) : undefined, messages: turns };
}

// Messages are immutable: each is converted once (per vision setting), not at every request of its run.
const seen = memoized((message: Message) => convert(message, true));
const blind = memoized((message: Message) => convert(message, false));

const blocksOf = (message: Message, vision: boolean): readonly ContentBlockParam[] => (vision ? seen : blind)(message);

/** The API refuses text blocks of nothing but whitespace. */
const text = (content: string): TextBlockParam[] => (content.trim() ? [{ type: 'text', text: content }] : []);

function convert(message: Message, vision: boolean): ContentBlockParam[] {
  switch (message.role) {
    case 'system':
      return text(message.content);
    case 'user':
      // Images first: the API's guidance for a question about an image.
      return vision && message.image ? [imageBlock(message.image), ...text(message.content)] : text(message.content);
    case 'assistant': {
      const calls: ContentBlockParam[] = (message.toolCalls ?? []).map((call) => ({
        type: 'tool_use',
        id: call.id,
        name: call.name,
        input: callInput(call),
      }));
      // Thinking first, as the API requires of a reply it is given back.
      return [...(message.reasoning ?? []).flatMap(thinkingBlock), ...text(message.content), ...calls];
    }
    case 'tool': {
      const image = vision && message.image ? [imageBlock(message.image)] : [];
      const content = image.length > 0 ? [...text(message.content), ...image] : message.content;
      return [
        {
          type: 'tool_result',
          tool_use_id: message.toolCallId,
          ...(content.length > 0 ? { content } : {}),
        },
      ];
    }
  }
}

/** A reasoning part as the API gave it: signed thinking, or redacted. Unsigned reasoning (another provider's) cannot go back. */
function thinkingBlock(part: ReasoningPart): ContentBlockParam[] {
  if (part.redacted !== undefined) return [{ type: 'redacted_thinking', data: part.redacted }];
  if (part.signature) return [{ type: 'thinking', thinking: part.text, signature: part.signature }];
  return [];
}

const imageBlock = (image: ImageData): ImageBlockParam => ({
  type: 'image',
  // The API takes JPEG, PNG, GIF and WebP; another type is refused by it, with its reason.
  source: { type: 'base64', media_type: image.mimeType as Base64ImageSource['media_type'], data: image.base64 },
});

// An agent's tool list is one array for its life: converted once, with and without the breakpoint.
const convertedTools = memoized((tools: readonly ToolSpec[]): { readonly plain: Tool[]; readonly cached: Tool[] } => {
  const plain: Tool[] = tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: { type: 'object', ...tool.parameters },
  }));
  const last = plain[plain.length - 1];
  return { plain, cached: last ? [...plain.slice(0, -1), { ...last, cache_control: EPHEMERAL }] : plain };
});

/** The tools in the API's shape; `cached` puts a breakpoint on the last one (tools come first in the cache's prefix). */
export function toolParams(tools: readonly ToolSpec[], cached: boolean): Tool[] {
  const converted = convertedTools(tools);
  return cached ? converted.cached : converted.plain;
}

/**
 * Our tool choice as the API's: `required` is `any`. With extended thinking the API refuses a
 * forced tool call, so `required` is asked as `auto` there (the kernel re-prompts a reply without one).
 */
export function toolChoiceParam(choice: ToolChoice, thinking: boolean): WireToolChoice {
  if (choice === 'none') return { type: 'none' };
  return choice === 'required' && !thinking ? { type: 'any' } : { type: 'auto' };
}
