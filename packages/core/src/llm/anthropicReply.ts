import type {
  ContentBlock,
  Message,
  MessageDeltaUsage,
  RawMessageStreamEvent,
  StopReason,
  Usage,
} from '@anthropic-ai/sdk/resources/messages';
import type { EventSourceMessage } from 'eventsource-parser';
import type { LlmUsage } from '../kernel/events.js';
import type { ReasoningPart, ToolCall } from '../kernel/messages.js';
import type { LlmDelta, LlmFinishReason, LlmResponse } from './llm.js';
import { replyErrorOf } from './replyError.js';
import { argumentsOf, type Reading, type ReplyParts, thought, toResponse } from './replyParts.js';
import {
  eventObject,
  inIndexOrder,
  ReplyCutShortError,
  readServerSentEvents,
  type StreamReading,
  tell,
} from './replyStream.js';

const STOP_REASONS: Readonly<Record<StopReason, LlmFinishReason>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  refusal: 'content_filter',
  pause_turn: 'other',
};

/** A non-streamed reply: the message's blocks in order. */
export function fromMessage(message: Message, reading: Reading): LlmResponse {
  if (!Array.isArray(message.content)) throw new TypeError('the reply has no content blocks');
  let text = '';
  const toolCalls: ToolCall[] = [];
  const reasoning: ReasoningPart[] = [];
  for (const block of message.content as readonly ContentBlock[]) {
    if (block.type === 'text') text += block.text;
    else if (block.type === 'tool_use')
      toolCalls.push({ id: block.id, name: block.name, arguments: argumentsOf(block.input) });
    else if (block.type === 'thinking') reasoning.push(thought(block.thinking, block.signature));
    else if (block.type === 'redacted_thinking') reasoning.push({ text: '', redacted: block.data });
  }
  const usage = message.usage && usageOf(message.usage);
  return toResponse({ text, toolCalls, reasoning, stopReason: message.stop_reason, usage }, reading, STOP_REASONS);
}

/**
 * The usage a reply reports. Anthropic's `input_tokens` leaves out what was read from and
 * written to the cache; ours counts them as parts of `inputTokens`, so they are added back.
 */
function usageOf(reported: Partial<Usage>): LlmUsage {
  const cached = reported.cache_read_input_tokens ?? 0;
  const written = reported.cache_creation_input_tokens ?? 0;
  const thinking = reported.output_tokens_details?.thinking_tokens;
  return {
    inputTokens: (reported.input_tokens ?? 0) + cached + written,
    outputTokens: reported.output_tokens ?? 0,
    ...(typeof reported.cache_read_input_tokens === 'number' ? { cachedInputTokens: cached } : {}),
    ...(typeof reported.cache_creation_input_tokens === 'number' ? { cacheWriteTokens: written } : {}),
    ...(typeof thinking === 'number' ? { reasoningTokens: thinking } : {}),
  };
}

/**
 * Reads a streamed reply from its server-sent events into the response: each block from its
 * start, deltas and stop, the stop reason and usage from message_start and message_delta, an
 * `error` event thrown as a `ReplyError`. Read here rather than by the SDK's stream, which hides
 * the pings from the idle timer (a long thinking pause is kept alive by them).
 */
export async function readAnthropicStream(
  body: AsyncIterable<Uint8Array> | null,
  reading: Reading & StreamReading,
): Promise<LlmResponse> {
  const reply = new StreamedMessage(reading);
  await readServerSentEvents(body, reply.onEvent);
  return toResponse(reply.finish(), reading, STOP_REASONS);
}

/** A block of the reply as its events build it. */
type BlockSoFar =
  | { readonly kind: 'text' }
  | { readonly kind: 'call'; readonly call: { id: string; name: string; arguments: string }; readonly index: number }
  | { readonly kind: 'thinking'; text: string; signature: string }
  | { readonly kind: 'redacted'; readonly data: string }
  | { readonly kind: 'other' };

/** A streamed message as its events come in. */
class StreamedMessage {
  private text = '';
  // By the block's index: a map, as a server may number its blocks sparsely.
  private readonly blocks = new Map<number, BlockSoFar>();
  private calls = 0;
  private stopReason: StopReason | null = null;
  private usage: Partial<Usage> | undefined;
  private stopped = false;
  private readonly arrived: () => void;
  private readonly onDelta: ((delta: LlmDelta) => void) | undefined;

  constructor({ arrived, onDelta }: StreamReading) {
    this.arrived = arrived;
    this.onDelta = onDelta;
  }

  readonly onEvent = ({ event, data }: EventSourceMessage): void => {
    if (this.stopped) return;
    this.arrived();
    if (event === 'ping') return;
    const parsed = eventObject(data);
    if (event === 'error' || ('type' in parsed && parsed.type === 'error')) {
      throw replyErrorOf((parsed as { error?: unknown }).error ?? parsed);
    }
    this.take(parsed as RawMessageStreamEvent);
  };

  private take(event: RawMessageStreamEvent): void {
    switch (event.type) {
      case 'message_start':
        this.usage = event.message.usage;
        break;
      case 'content_block_start':
        this.start(event.index, event.content_block);
        break;
      case 'content_block_delta':
        this.delta(event.index, event.delta);
        break;
      case 'message_delta':
        if (event.delta.stop_reason) this.stopReason = event.delta.stop_reason;
        this.usage = { ...this.usage, ...reported(event.usage) };
        break;
      case 'message_stop':
        this.stopped = true;
        break;
    }
  }

  private start(index: number, block: ContentBlock): void {
    switch (block.type) {
      case 'text':
        this.blocks.set(index, { kind: 'text' });
        if (block.text) this.addText(block.text);
        return;
      case 'tool_use': {
        const call = { id: block.id, name: block.name, arguments: '' };
        const callIndex = this.calls++;
        this.blocks.set(index, { kind: 'call', call, index: callIndex });
        tell(this.onDelta, { toolCall: { index: callIndex, id: call.id, name: call.name } });
        return;
      }
      case 'thinking':
        this.blocks.set(index, { kind: 'thinking', text: block.thinking ?? '', signature: block.signature ?? '' });
        return;
      case 'redacted_thinking':
        this.blocks.set(index, { kind: 'redacted', data: block.data });
        return;
      default:
        this.blocks.set(index, { kind: 'other' });
    }
  }

  private delta(index: number, delta: Extract<RawMessageStreamEvent, { type: 'content_block_delta' }>['delta']): void {
    const block = this.blocks.get(index);
    if (delta.type === 'text_delta' && block?.kind === 'text') this.addText(delta.text);
    else if (delta.type === 'input_json_delta' && block?.kind === 'call' && delta.partial_json) {
      block.call.arguments += delta.partial_json;
      tell(this.onDelta, { toolCall: { index: block.index, arguments: delta.partial_json } });
    } else if (delta.type === 'thinking_delta' && block?.kind === 'thinking') block.text += delta.thinking;
    else if (delta.type === 'signature_delta' && block?.kind === 'thinking') block.signature += delta.signature;
  }

  private addText(text: string): void {
    this.text += text;
    tell(this.onDelta, { text });
  }

  finish(): ReplyParts {
    if (!this.stopped) throw new ReplyCutShortError('the reply stream ended before the reply did (no message_stop)');
    const toolCalls: ToolCall[] = [];
    const reasoning: ReasoningPart[] = [];
    for (const block of inIndexOrder(this.blocks)) {
      // A call without arguments streams none: its input is the empty object.
      if (block.kind === 'call') toolCalls.push({ ...block.call, arguments: block.call.arguments || '{}' });
      else if (block.kind === 'thinking') reasoning.push(thought(block.text, block.signature));
      else if (block.kind === 'redacted') reasoning.push({ text: '', redacted: block.data });
    }
    const usage = this.usage && usageOf(this.usage);
    return { text: this.text, toolCalls, reasoning, stopReason: this.stopReason, usage };
  }
}

/** message_delta's usage counts so far: its null fields say nothing. */
function reported(usage: MessageDeltaUsage | undefined): Partial<Usage> {
  const given: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(usage ?? {})) if (value !== null && value !== undefined) given[key] = value;
  return given as Partial<Usage>;
}
