// What every port's reading of a streamed reply shares: how it ends wrong, and how it tells its listener.
import type { EventSourceMessage } from 'eventsource-parser';
import { lazyModule } from '../lazyModule.js';
import type { LlmDelta } from './llm.js';

/**
 * The stream closed without the reply's end (no finish reason, no stop event): as good as a cut connection.
 * Internal to the LLM ports, so not of the OpenManusError family: the port turns it into an `LlmError`
 * value before its result leaves it.
 */
export class ReplyCutShortError extends Error {
  override readonly name = 'ReplyCutShortError';
}

/**
 * A delta listener failed: the caller's fault, not the reply's. Internal to the LLM ports, so not of the
 * OpenManusError family: the port throws the listener's own error (`cause`) to the caller.
 */
export class DeltaListenerError extends Error {
  override readonly name = 'DeltaListenerError';
}

/** How the reply is read, besides its body. */
export interface StreamReading {
  /** Told of every chunk of the reply (the idle timer). */
  readonly arrived: () => void;
  /** Gets the reply's pieces as they come. */
  readonly onDelta?: ((delta: LlmDelta) => void) | undefined;
}

/** Tells the listener, if any, of a piece of the reply: its failure must not pass for a broken reply. */
export function tell(onDelta: ((delta: LlmDelta) => void) | undefined, delta: LlmDelta): void {
  if (!onDelta) return;
  try {
    onDelta(delta);
  } catch (error) {
    throw new DeltaListenerError('a delta listener failed', { cause: error });
  }
}

const loadEventSourceParser = lazyModule<typeof import('eventsource-parser')>('eventsource-parser');
const STREAMING = { stream: true } as const;

/**
 * Reads a body of server-sent events to its end, each event handed to `onEvent` as it is parsed
 * (synchronously: the loop only waits for bytes). Read to the end: a body left unread would keep
 * its connection from being reused.
 */
export async function readServerSentEvents(
  body: AsyncIterable<Uint8Array> | null,
  onEvent: (event: EventSourceMessage) => void,
): Promise<void> {
  const parser = loadEventSourceParser().createParser({ onEvent });
  const decoder = new TextDecoder();
  for await (const bytes of body ?? []) parser.feed(decoder.decode(bytes, STREAMING));
  parser.feed(decoder.decode());
}

/** An event's data as the JSON object it must be. */
export function eventObject(data: string): object {
  const parsed: unknown = JSON.parse(data);
  if (typeof parsed !== 'object' || parsed === null)
    throw new SyntaxError(`a stream event is not a JSON object: ${data.slice(0, 100)}`);
  return parsed;
}

/** What a stream built by index (blocks, calls), in the order of the index: a server may number them sparsely. */
export const inIndexOrder = <T>(byIndex: ReadonlyMap<number, T>): T[] =>
  byIndex.size > 1 ? [...byIndex].sort(([a], [b]) => a - b).map(([, item]) => item) : [...byIndex.values()];
