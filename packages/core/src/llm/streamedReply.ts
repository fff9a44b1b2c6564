import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';
import type { ToolCall } from '../kernel/messages.js';
import type { LlmDelta } from './llm.js';

/** A streamed reply added up: what a non-streamed completion's message and usage carry. */
export interface StreamedReply {
  readonly content: string;
  readonly toolCalls: readonly ToolCall[];
  readonly usage?: CompletionUsage;
}

/** The stream closed without the reply's end (no finish_reason): as good as a cut connection. */
export class ReplyCutShortError extends Error {
  override readonly name = 'ReplyCutShortError';
}

/** A delta listener failed: the caller's fault, not the reply's. */
export class DeltaListenerError extends Error {
  override readonly name = 'DeltaListenerError';
}

interface CallSoFar {
  id: string;
  name: string;
  arguments: string;
}

/**
 * Reads a chat-completions chunk stream into the reply, as the API's own stream helper would
 * but without rebuilding a snapshot per chunk: text concatenated, tool calls assembled by
 * `index` (id and name when given, argument pieces concatenated), usage from its last chunk.
 * `arrived` is told of every chunk (the idle timer); `onDelta` gets the pieces as they come.
 */
export async function readStreamedReply(
  chunks: AsyncIterable<ChatCompletionChunk>,
  arrived: () => void,
  onDelta?: (delta: LlmDelta) => void,
): Promise<StreamedReply> {
  // The loop only waits; each chunk is taken in by plain synchronous code. V8 compiles an async
  // function's loop with everything it calls inlined into one large state machine: kept small,
  // it is optimised in a fraction of the time (a short run pays that compile on its own clock).
  const reply = new ReplyAssembler(onDelta);
  for await (const chunk of chunks) {
    arrived();
    reply.take(chunk);
  }
  return reply.finish();
}

/** A streamed reply as its chunks come in. */
class ReplyAssembler {
  private content = '';
  // By index: a map, as a server may number its calls sparsely (or absurdly).
  private readonly calls = new Map<number, CallSoFar>();
  private usage: CompletionUsage | undefined;
  private finished = false;

  constructor(private readonly onDelta: ((delta: LlmDelta) => void) | undefined) {}

  take(chunk: ChatCompletionChunk): void {
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) return;
    if (choice.finish_reason) this.finished = true;
    const { delta } = choice;
    if (!delta) return;
    const text = delta.content;
    if (text) {
      this.content += text;
      this.tell({ text });
    }
    if (delta.tool_calls) for (const piece of delta.tool_calls) this.addPiece(piece);
  }

  finish(): StreamedReply {
    if (!this.finished) throw new ReplyCutShortError('the reply stream ended before the reply did (no finish_reason)');
    const { calls, content, usage } = this;
    const toolCalls: ToolCall[] =
      calls.size > 1 ? [...calls].sort(([a], [b]) => a - b).map(([, c]) => c) : [...calls.values()];
    return usage ? { content, toolCalls, usage } : { content, toolCalls };
  }

  /** A listener's failure must not pass for a broken reply. */
  private tell(delta: LlmDelta): void {
    if (!this.onDelta) return;
    try {
      this.onDelta(delta);
    } catch (error) {
      throw new DeltaListenerError('a delta listener failed', { cause: error });
    }
  }

  private addPiece(piece: ChatCompletionChunk.Choice.Delta.ToolCall): void {
    const { index } = piece;
    const fn = piece.function;
    let call = this.calls.get(index);
    if (!call) {
      call = { id: '', name: '', arguments: '' };
      this.calls.set(index, call);
    }
    // Some compatible servers send the arguments as an object instead of JSON text.
    const given: unknown = fn?.arguments;
    const args = typeof given === 'string' || given === undefined || given === null ? given : JSON.stringify(given);
    if (args) call.arguments += args;
    // Who the call is, told once: when first given (some servers repeat it in every piece).
    const id = piece.id && piece.id !== call.id ? piece.id : undefined;
    const name = fn?.name && fn.name !== call.name ? fn.name : undefined;
    if (id) call.id = id;
    if (name) call.name = name;
    if (this.onDelta && (id || name || args)) {
      this.tell({
        toolCall: {
          index,
          ...(id ? { id } : {}),
          ...(name ? { name } : {}),
          ...(args ? { arguments: args } : {}),
        },
      });
    }
  }
}
