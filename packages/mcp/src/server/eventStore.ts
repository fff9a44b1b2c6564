import type { EventId, EventStore, StreamId } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** How much of a session's SSE traffic is kept for clients that reconnect (`Last-Event-ID`). */
export interface EventBufferLimits {
  /** The most events kept per stream (default 200); a stream's oldest go first. */
  readonly maxEventsPerStream?: number;
  /** The most bytes kept for all the session's streams together (default 4 MiB); the oldest events go first. */
  readonly maxBytes?: number;
}

/** A session's event store, with how much it holds now. */
export interface BoundedEventStore extends EventStore {
  /** The stream an id of this store's names, while any of its events is kept. */
  getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined>;
  /** The events kept and the bytes they count for (their JSON, and what an event costs besides). */
  held(): { readonly events: number; readonly bytes: number };
}

const MAX_EVENTS_PER_STREAM = 200;
const MAX_BYTES = 4 * 1024 * 1024;
/** What an event costs in memory besides its JSON: a million empty priming events are not free. */
const EVENT_OVERHEAD = 64;

interface Stored {
  readonly stream: StreamId;
  readonly seq: number;
  readonly json: string;
  readonly bytes: number;
}

/**
 * An in-memory event store for the streamable HTTP transport: every event sent on an SSE stream is
 * kept under an id (`<stream>:<seq>`), so that a client whose stream broke reconnects with the last
 * id it saw and gets what it missed — a tool's result included. It is bounded: at most
 * `maxEventsPerStream` a stream and `maxBytes` in all, the oldest dropped first (always the newest
 * events are kept, a result among them). A stream all of whose events were dropped is forgotten and
 * cannot be resumed.
 */
export function boundedEventStore(limits: EventBufferLimits = {}): BoundedEventStore {
  const perStream = limits.maxEventsPerStream ?? MAX_EVENTS_PER_STREAM;
  const maxBytes = limits.maxBytes ?? MAX_BYTES;
  for (const [name, value] of [
    ['maxEventsPerStream', perStream],
    ['maxBytes', maxBytes],
  ] as const) {
    if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  }
  const streams = new Map<StreamId, Stored[]>();
  // Every event kept, oldest first: the oldest of all is also the oldest of its stream.
  const order = new Set<Stored>();
  let bytes = 0;
  let seq = 0;

  const dropOldest = (events: Stored[]) => {
    const oldest = events.shift() as Stored;
    order.delete(oldest);
    bytes -= oldest.bytes;
    if (events.length === 0) streams.delete(oldest.stream);
  };

  /** The stream and sequence number an id of ours names; undefined for any other string. */
  const parse = (id: EventId): { stream: StreamId; seq: number } | undefined => {
    const at = id.lastIndexOf(':');
    const n = Number(id.slice(at + 1));
    return at > 0 && Number.isSafeInteger(n) && n >= 1 && n <= seq ? { stream: id.slice(0, at), seq: n } : undefined;
  };

  return {
    async storeEvent(stream: StreamId, message: JSONRPCMessage): Promise<EventId> {
      const json = JSON.stringify(message);
      const event: Stored = { stream, seq: ++seq, json, bytes: Buffer.byteLength(json) + EVENT_OVERHEAD };
      let events = streams.get(stream);
      if (!events) {
        events = [];
        streams.set(stream, events);
      }
      events.push(event);
      order.add(event);
      bytes += event.bytes;
      if (events.length > perStream) dropOldest(events);
      while (bytes > maxBytes) {
        const oldest = order.values().next().value as Stored;
        dropOldest(streams.get(oldest.stream) as Stored[]);
      }
      return `${stream}:${event.seq}`;
    },
    async getStreamIdForEventId(id: EventId): Promise<StreamId | undefined> {
      const named = parse(id);
      return named && streams.has(named.stream) ? named.stream : undefined;
    },
    async replayEventsAfter(id: EventId, { send }): Promise<StreamId> {
      const named = parse(id);
      const events = named && streams.get(named.stream);
      if (!named || !events) throw new Error(`No events are kept after ${JSON.stringify(id)}`);
      // Copied first: sending may store more events on the stream. A priming event (`{}`, what a
      // stream begins with to give the client an id) is no message to send again.
      for (const event of events.filter((kept) => kept.seq > named.seq && kept.json !== '{}')) {
        await send(`${event.stream}:${event.seq}`, JSON.parse(event.json) as JSONRPCMessage);
      }
      return named.stream;
    },
    held: () => ({ events: order.size, bytes }),
  };
}
