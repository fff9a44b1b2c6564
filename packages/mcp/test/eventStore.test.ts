// Resumable SSE: the bounded event store our streamable HTTP sessions keep, and a client that lost
// its stream mid-call getting what it missed — the call's result included — with Last-Event-ID.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { defineTool } from '@openmanus/core';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { boundedEventStore } from '../src/server/eventStore.js';
import { createMcpServer, type McpToolServer } from '../src/server/mcpServer.js';
import { eventually, httpClient } from './helpers.js';

const note = (n: number, text = ''): JSONRPCMessage => ({
  jsonrpc: '2.0',
  method: 'notifications/message',
  params: { level: 'info', data: `${n}${text}` },
});

/** Every message a store replays after `id`. */
async function replayed(store: ReturnType<typeof boundedEventStore>, id: string) {
  const sent: { id: string; message: JSONRPCMessage }[] = [];
  const stream = await store.replayEventsAfter(id, {
    send: async (eventId, message) => {
      sent.push({ id: eventId, message });
    },
  });
  return { stream, sent };
}

describe('boundedEventStore', () => {
  it("replays a stream's events after the one named, and no other stream's", async () => {
    const store = boundedEventStore();
    const first = await store.storeEvent('a', note(1));
    await store.storeEvent('b', note(2));
    const third = await store.storeEvent('a', note(3));
    expect(await store.getStreamIdForEventId(first)).toBe('a');
    const { stream, sent } = await replayed(store, first);
    expect(stream).toBe('a');
    expect(sent).toEqual([{ id: third, message: note(3) }]);
    expect((await replayed(store, third)).sent).toEqual([]);
  });

  it('does not replay priming events, and knows no id it did not give', async () => {
    const store = boundedEventStore();
    const priming = await store.storeEvent('a', {} as JSONRPCMessage);
    await store.storeEvent('a', note(1));
    expect((await replayed(store, priming)).sent.map(({ message }) => message)).toEqual([note(1)]);
    for (const id of ['a:99', 'a', ':1', 'a:one', 'b:1']) {
      expect(await store.getStreamIdForEventId(id)).toBeUndefined();
      await expect(store.replayEventsAfter(id, { send: async () => {} })).rejects.toThrow(/No events are kept/);
    }
  });

  it('keeps at most maxEventsPerStream events a stream, the newest', async () => {
    const store = boundedEventStore({ maxEventsPerStream: 3 });
    const ids: string[] = [];
    for (let n = 1; n <= 10; n++) ids.push(await store.storeEvent('a', note(n)));
    await store.storeEvent('b', note(0));
    expect(store.held().events).toBe(4);
    // Resumed from an id no longer kept, the stream gives what it still has: the newest events.
    const { sent } = await replayed(store, ids[0] as string);
    expect(sent.map(({ message }) => message)).toEqual([note(8), note(9), note(10)]);
  });

  it('keeps at most maxBytes for all streams together, the oldest dropped first', async () => {
    const maxBytes = 10_000;
    const store = boundedEventStore({ maxBytes });
    const kilobyte = 'x'.repeat(1000);
    let last = '';
    for (let n = 1; n <= 200; n++) {
      last = await store.storeEvent(n % 2 ? 'odd' : 'even', note(n, kilobyte));
      expect(store.held().bytes).toBeLessThanOrEqual(maxBytes);
    }
    const held = store.held();
    expect(held.events).toBeGreaterThan(5);
    expect(held.events).toBeLessThan(10);
    // The newest event is kept; the first ones are long gone, with their stream's older events.
    expect(await store.getStreamIdForEventId(last)).toBe('even');
    // An event bigger than the whole bound is not kept at all, nor is anything older.
    await store.storeEvent('odd', note(0, 'y'.repeat(maxBytes)));
    expect(store.held()).toEqual({ events: 0, bytes: 0 });
    expect(await store.getStreamIdForEventId(last)).toBeUndefined();
  });

  it('refuses limits that are not positive integers, also when a server is started with them', async () => {
    expect(() => boundedEventStore({ maxBytes: 0 })).toThrow(RangeError);
    expect(() => boundedEventStore({ maxEventsPerStream: 1.5 })).toThrow(RangeError);
    const server = createMcpServer([]);
    await expect(server.serveHttp({ port: 0, eventBuffer: { maxBytes: -1 } })).rejects.toThrow(/maxBytes/);
    await expect(server.serveHttp({ port: 0, sseRetryMs: Number.NaN })).rejects.toThrow(/sseRetryMs/);
    await server.close();
  });
});

interface SseEvent {
  readonly id?: string;
  readonly retry?: number;
  readonly data: string;
}

/** The events of an SSE response as they come, comments (keep-alives) left out. */
async function* sseEvents(response: Response): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of response.body as ReadableStream<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true });
    for (let end = buffered.indexOf('\n\n'); end !== -1; end = buffered.indexOf('\n\n')) {
      const fields = buffered
        .slice(0, end)
        .split('\n')
        .filter((line) => !line.startsWith(':'))
        .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trimStart()] as const);
      buffered = buffered.slice(end + 2);
      if (fields.length === 0) continue;
      const field = (name: string) => fields.find(([key]) => key === name)?.[1];
      const retry = field('retry');
      yield {
        ...(field('id') !== undefined ? { id: field('id') } : {}),
        ...(retry !== undefined ? { retry: Number(retry) } : {}),
        data: fields
          .filter(([key]) => key === 'data')
          .map(([, value]) => value)
          .join('\n'),
      };
    }
  }
}

describe('resuming a broken stream over streamable HTTP', () => {
  let server: McpToolServer | undefined;
  let client: Client | undefined;
  afterEach(async () => {
    await client?.close();
    await server?.close();
  });

  it('begins each stream with an id and the retry time, and replays what a client missed, the result included', async () => {
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let finished = () => {};
    const done = new Promise<void>((resolve) => {
      finished = resolve;
    });
    const report = defineTool({
      name: 'long_report',
      description: 'Writes a report, which takes a while.',
      parameters: z.object({}),
      execute: async (_, scope) => {
        scope.log('info', 'started');
        await released;
        scope.log('info', 'almost there');
        finished();
        return 'The report is ready.';
      },
    });
    server = createMcpServer([report]);
    const serving = await server.serveHttp({ port: 0, sseRetryMs: 250 });
    const connected = await httpClient(serving.url, serving.token);
    client = connected.client;
    const transport: StreamableHTTPClientTransport = connected.transport;
    // A 2025-11-25 client, as the SDK's negotiates: older ones get no priming event (they cannot read one).
    expect(transport.protocolVersion).toBe('2025-11-25');
    const headers = {
      authorization: `Bearer ${serving.token}`,
      'mcp-session-id': transport.sessionId ?? '',
      'mcp-protocol-version': transport.protocolVersion ?? '',
    };

    const cut = new AbortController();
    const post = await fetch(serving.url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 5,
        method: 'tools/call',
        params: { name: 'long_report', arguments: {} },
      }),
      signal: cut.signal,
    });
    const events = sseEvents(post);
    const priming = (await events.next()).value as SseEvent;
    expect(priming).toEqual({ id: expect.any(String), retry: 250, data: '' });
    const started = (await events.next()).value as SseEvent;
    expect(JSON.parse(started.data)).toMatchObject({ method: 'notifications/message', params: { data: 'started' } });

    // The connection breaks; the call goes on to its end meanwhile.
    cut.abort();
    await events.return(undefined).catch(() => {});
    release();
    await done;

    // Until the server has seen the old stream go, the stream is still taken (409): ask until it is free.
    let resumed: Response | undefined;
    await eventually(async () => {
      const answer = await fetch(serving.url, {
        headers: { ...headers, accept: 'text/event-stream', 'last-event-id': started.id ?? '' },
      });
      if (answer.status === 200) resumed = answer;
      else await answer.body?.cancel();
      return answer.status === 200;
    });
    const replay = sseEvents(resumed as Response);
    const missed = [(await replay.next()).value, (await replay.next()).value] as SseEvent[];
    expect(missed.map((event) => JSON.parse(event.data))).toEqual([
      { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'almost there' } },
      { jsonrpc: '2.0', id: 5, result: { content: [{ type: 'text', text: 'The report is ready.' }] } },
    ]);
    expect(missed.every((event) => event.id !== undefined && event.id !== started.id)).toBe(true);
    await replay.return(undefined);
  });
});
