import type {
  ContentBlockDelta,
  ContentBlockStart,
  ConverseResponse,
  ConverseStreamOutput,
  TokenUsage,
} from '@aws-sdk/client-bedrock-runtime';
import type { LlmUsage } from '../kernel/events.js';
import type { ReasoningPart, ToolCall } from '../kernel/messages.js';
import type { LlmDelta, LlmResponse } from './llm.js';
import { argumentsOf, type Reading, type ReplyParts, type StopReasons, thought, toResponse } from './replyParts.js';
import { inIndexOrder, ReplyCutShortError, type StreamReading, tell } from './replyStream.js';

const STOP_REASONS: StopReasons = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  content_filtered: 'content_filter',
  guardrail_intervened: 'content_filter',
};

/** A Converse reply: the message's blocks in order. */
export function fromConverse(response: ConverseResponse, reading: Reading): LlmResponse {
  const content = response.output?.message?.content;
  if (!Array.isArray(content)) throw new TypeError('the reply has no output.message.content');
  let text = '';
  const toolCalls: ToolCall[] = [];
  const reasoning: ReasoningPart[] = [];
  for (const block of content) {
    if (typeof block.text === 'string') text += block.text;
    else if (block.toolUse) {
      const { toolUseId = '', name = '', input } = block.toolUse;
      // Converse's input is a JSON value: an object, as a rule; a string is taken as the JSON text.
      toolCalls.push({ id: toolUseId, name, arguments: argumentsOf(input) });
    } else if (block.reasoningContent?.reasoningText) {
      const { text: said = '', signature } = block.reasoningContent.reasoningText;
      reasoning.push(thought(said, signature));
    } else if (block.reasoningContent?.redactedContent) {
      reasoning.push({ text: '', redacted: Buffer.from(block.reasoningContent.redactedContent).toString('base64') });
    }
  }
  const usage = response.usage && usageOf(response.usage);
  return toResponse({ text, toolCalls, reasoning, stopReason: response.stopReason, usage }, reading, STOP_REASONS);
}

/**
 * The usage a reply reports. Bedrock's `inputTokens` leaves out what was read from and written
 * to the cache; ours counts them as parts of `inputTokens`, so they are added back.
 */
function usageOf(reported: TokenUsage): LlmUsage {
  const cached = reported.cacheReadInputTokens;
  const written = reported.cacheWriteInputTokens;
  return {
    inputTokens: (reported.inputTokens ?? 0) + (cached ?? 0) + (written ?? 0),
    outputTokens: reported.outputTokens ?? 0,
    ...(typeof cached === 'number' ? { cachedInputTokens: cached } : {}),
    ...(typeof written === 'number' ? { cacheWriteTokens: written } : {}),
  };
}

/**
 * Reads a ConverseStream reply, as the SDK decodes its event stream, into the response: each
 * block from its start, deltas and stop, the stop reason from messageStop and the usage from
 * metadata. An exception frame comes out of the SDK's stream as its exception, thrown; a stream
 * that ends before messageStop was cut short.
 */
export async function readConverseStream(
  events: AsyncIterable<ConverseStreamOutput> | undefined,
  reading: Reading & StreamReading,
): Promise<LlmResponse> {
  if (!events) throw new TypeError('the reply has no stream');
  const reply = new StreamedReply(reading);
  for await (const event of events) reply.take(event);
  return toResponse(reply.finish(), reading, STOP_REASONS);
}

/** A tool call's block: the call so far, and which call of the reply it is. */
interface CallSoFar {
  readonly kind: 'call';
  readonly call: { id: string; name: string; arguments: string };
  readonly index: number;
}

/** A block of the reply as its events build it. */
type BlockSoFar =
  | { readonly kind: 'text' }
  | CallSoFar
  | { readonly kind: 'reasoning'; text: string; signature: string; readonly redacted: Uint8Array[] };

/** A streamed reply as its events come in. */
class StreamedReply {
  private text = '';
  // By the block's index: a map, as a server may number its blocks sparsely.
  private readonly blocks = new Map<number, BlockSoFar>();
  private calls = 0;
  private stopReason: string | undefined;
  private usage: TokenUsage | undefined;
  private stopped = false;
  private readonly arrived: () => void;
  private readonly onDelta: ((delta: LlmDelta) => void) | undefined;

  constructor({ arrived, onDelta }: StreamReading) {
    this.arrived = arrived;
    this.onDelta = onDelta;
  }

  take(event: ConverseStreamOutput): void {
    this.arrived();
    if (event.contentBlockStart)
      this.start(event.contentBlockStart.contentBlockIndex ?? 0, event.contentBlockStart.start);
    else if (event.contentBlockDelta)
      this.delta(event.contentBlockDelta.contentBlockIndex ?? 0, event.contentBlockDelta.delta);
    else if (event.messageStop) {
      this.stopped = true;
      this.stopReason = event.messageStop.stopReason;
    } else if (event.metadata?.usage) this.usage = event.metadata.usage;
  }

  finish(): ReplyParts {
    if (!this.stopped) throw new ReplyCutShortError('the reply stream ended before the reply did (no messageStop)');
    const toolCalls: ToolCall[] = [];
    const reasoning: ReasoningPart[] = [];
    for (const block of inIndexOrder(this.blocks)) {
      if (block.kind === 'call') toolCalls.push(block.call);
      else if (block.kind === 'reasoning') reasoning.push(reasoningOf(block));
    }
    const usage = this.usage && usageOf(this.usage);
    return { text: this.text, toolCalls, reasoning, stopReason: this.stopReason, usage };
  }

  private start(index: number, start: ContentBlockStart | undefined): void {
    const toolUse = start?.toolUse;
    if (!toolUse) return;
    this.startCall(index, toolUse.toolUseId ?? '', toolUse.name ?? '');
  }

  private startCall(index: number, id: string, name: string): CallSoFar {
    const block: CallSoFar = { kind: 'call', call: { id, name, arguments: '' }, index: this.calls++ };
    this.blocks.set(index, block);
    tell(this.onDelta, { toolCall: { index: block.index, ...(id ? { id } : {}), ...(name ? { name } : {}) } });
    return block;
  }

  private delta(index: number, delta: ContentBlockDelta | undefined): void {
    if (!delta) return;
    if (typeof delta.text === 'string') {
      if (!this.blocks.has(index)) this.blocks.set(index, { kind: 'text' });
      if (!delta.text) return;
      this.text += delta.text;
      tell(this.onDelta, { text: delta.text });
    } else if (delta.toolUse) {
      const piece = delta.toolUse.input ?? '';
      const known = this.blocks.get(index);
      // A call's pieces without its start: a call of its own, unnamed.
      const block = known?.kind === 'call' ? known : this.startCall(index, '', '');
      if (!piece) return;
      block.call.arguments += piece;
      tell(this.onDelta, { toolCall: { index: block.index, arguments: piece } });
    } else if (delta.reasoningContent) {
      let block = this.blocks.get(index);
      if (block?.kind !== 'reasoning') {
        block = { kind: 'reasoning', text: '', signature: '', redacted: [] };
        this.blocks.set(index, block);
      }
      const { text, signature, redactedContent } = delta.reasoningContent;
      if (text) block.text += text;
      if (signature) block.signature += signature;
      if (redactedContent) block.redacted.push(redactedContent);
    }
  }
}

function reasoningOf(block: { text: string; signature: string; redacted: readonly Uint8Array[] }): ReasoningPart {
  if (block.redacted.length > 0) return { text: '', redacted: Buffer.concat(block.redacted).toString('base64') };
  return thought(block.text, block.signature);
}
