import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAiLlm, type LlmDelta, type LlmRequest } from '../src/index.js';

// The port reads a streamed reply's server-sent events itself: these tests speak the wire format
// from a bare HTTP server, in the framings real servers and proxies produce.

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** A server answering every request with these bytes, written piece by piece with a pause between. */
async function serveBytes(pieces: readonly (string | Uint8Array)[]): Promise<{ baseURL: string }> {
  const server = createServer(async (req, res) => {
    for await (const _ of req);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const piece of pieces) {
      res.write(piece);
      // Long enough for each piece to leave in a packet of its own.
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    res.end();
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return { baseURL: `http://127.0.0.1:${port}/v1` };
}

const llmFor = (baseURL: string) =>
  createOpenAiLlm({ model: 'gpt-4o-mini', apiKey: 'sk-test', baseURL, maxRetries: 0, stream: true });
const request: LlmRequest = { messages: [{ role: 'user', content: 'hi' }], tools: [], toolChoice: 'auto' };

const chunk = (delta: object, finish: string | null = null) =>
  JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'gpt-4o-mini',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
const usageChunk = JSON.stringify({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'gpt-4o-mini',
  choices: [],
  usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 },
});

/** Every byte of `text` a piece of its own: events, lines and characters all split. */
const byteByByte = (text: string) => Array.from(new TextEncoder().encode(text), (byte) => Uint8Array.of(byte));

describe('a streamed reply on the wire', () => {
  it('split anywhere, even inside a character, it adds up to the whole reply', async () => {
    const content = 'Grüße aus Köln 🌍, 東京 too.';
    const events =
      `data: ${chunk({ role: 'assistant', content: content.slice(0, 9) })}\n\n` +
      `data: ${chunk({ content: content.slice(9) })}\n\n` +
      `data: ${chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'add', arguments: '{"a":' } }] })}\n\n` +
      `data: ${chunk({ tool_calls: [{ index: 0, function: { arguments: '1,"b":2}' } }] })}\n\n` +
      `data: ${chunk({}, 'tool_calls')}\n\n` +
      `data: ${usageChunk}\n\n` +
      'data: [DONE]\n\n';
    const { baseURL } = await serveBytes(byteByByte(events));
    const deltas: LlmDelta[] = [];
    const result = await llmFor(baseURL).complete(request, { onDelta: (d) => deltas.push(d) });
    expect(result).toEqual({
      ok: true,
      value: {
        content,
        toolCalls: [{ id: 'call_1', name: 'add', arguments: '{"a":1,"b":2}' }],
        usage: { inputTokens: 9, outputTokens: 4 },
      },
    });
    expect(deltas.map((d) => d.text ?? '').join('')).toBe(content);
  });

  it('CRLF and CR line ends, comments, event names, ids and data over two lines are read as the standard says', async () => {
    const { baseURL } = await serveBytes([
      ': keep-alive\r\n\r\n',
      `event: message\r\nid: 1\r\ndata: ${chunk({ role: 'assistant', content: 'one ' })}\r\n\r\n`,
      `: still thinking\n\ndata: ${chunk({ content: 'two ' })}\r\rretry: 1000\n`,
      // A JSON value may span data lines: they are joined with a newline.
      `\ndata: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m",\ndata: "choices":[{"index":0,"delta":{"content":"three"},"finish_reason":"stop"}]}\n\n`,
      'data: [DONE]\n\n',
    ]);
    const result = await llmFor(baseURL).complete(request);
    expect(result).toEqual({ ok: true, value: { content: 'one two three', toolCalls: [] } });
  });

  it('an error the server sends inside the stream fails the call with its message', async () => {
    const { baseURL } = await serveBytes([
      `data: ${chunk({ role: 'assistant', content: 'Half an ans' })}\n\n`,
      `data: ${JSON.stringify({ error: { message: 'The upstream provider is overloaded', type: 'server_error' } })}\n\n`,
    ]);
    const deltas: LlmDelta[] = [];
    const result = await llmFor(baseURL).complete(request, { onDelta: (d) => deltas.push(d) });
    expect(result).toEqual({
      ok: false,
      error: { kind: 'bad_request', message: 'The upstream provider is overloaded' },
    });
    expect(deltas).toEqual([{ text: 'Half an ans' }]);
  });

  it('nothing after [DONE] is part of the reply', async () => {
    const { baseURL } = await serveBytes([
      `data: ${chunk({ role: 'assistant', content: 'kept' }, 'stop')}\n\n`,
      'data: [DONE]\n\n',
      `data: ${chunk({ content: ' not kept' })}\n\n`,
      'data: {"not json\n\n',
    ]);
    const deltas: LlmDelta[] = [];
    const result = await llmFor(baseURL).complete(request, { onDelta: (d) => deltas.push(d) });
    expect(result).toEqual({ ok: true, value: { content: 'kept', toolCalls: [] } });
    expect(deltas).toEqual([{ text: 'kept' }]);
  });

  it('an event that is not a JSON object is a malformed reply, named as such', async () => {
    const { baseURL } = await serveBytes(['data: 42\n\n', 'data: [DONE]\n\n']);
    expect(await llmFor(baseURL).complete(request)).toEqual({
      ok: false,
      error: { kind: 'malformed_response', message: 'a stream event is not a JSON object: 42' },
    });
  });
});
