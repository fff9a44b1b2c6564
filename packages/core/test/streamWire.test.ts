import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { LlmRequest } from '../src/kernel/effects.js';
import type { LlmDelta } from '../src/llm/llm.js';
import { createOpenAiLlm } from '../src/llm/openai.js';
import { readStreamedReply } from '../src/llm/streamedReply.js';
import { err, ok } from '../src/result.js';

// The port reads a streamed reply's server-sent events itself: these tests speak the wire format
// from a bare HTTP server, in the framings real servers and proxies produce.

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((server) => {
      const closed = new Promise((resolve) => server.close(resolve));
      // A reply the port stopped reading leaves its connection to the server's keep-alive time-out.
      server.closeAllConnections();
      return closed;
    }),
  );
});

type Pieces = readonly (string | Uint8Array)[];

/**
 * A server answering with these bytes, written piece by piece with a pause between: the first
 * request with the first reply, and so on, the last reply to any request after.
 */
async function serveReplies(contentType: string, replies: readonly Pieces[]): Promise<{ baseURL: string }> {
  let served = 0;
  const server = createServer(async (req, res) => {
    for await (const _ of req);
    const pieces = replies[Math.min(served++, replies.length - 1)] ?? [];
    res.writeHead(200, { 'content-type': contentType });
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
const serveBytes = (...replies: readonly Pieces[]) => serveReplies('text/event-stream', replies);
const serveJson = (...bodies: readonly object[]) =>
  serveReplies(
    'application/json',
    bodies.map((body) => [JSON.stringify(body)]),
  );

const llmFor = (baseURL: string, maxRetries = 0, stream = true) =>
  createOpenAiLlm({ model: 'gpt-4o-mini', apiKey: 'sk-test', baseURL, maxRetries, stream });
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

/** `text` in pieces of `size` bytes: events, lines and characters cut wherever they fall. */
const piecesOf = (text: string, size: number) => {
  const bytes = new TextEncoder().encode(text);
  const pieces: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) pieces.push(bytes.subarray(i, i + size));
  return pieces;
};
const cutsACharacter = (pieces: readonly Uint8Array[]) =>
  pieces.some((piece) => {
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(piece);
      return false;
    } catch {
      return true;
    }
  });

const content = 'Grüße aus Köln 🌍, 東京 too.';
const events =
  `data: ${chunk({ role: 'assistant', content: content.slice(0, 9) })}\n\n` +
  `data: ${chunk({ content: content.slice(9) })}\n\n` +
  `data: ${chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'add', arguments: '{"a":' } }] })}\n\n` +
  `data: ${chunk({ tool_calls: [{ index: 0, function: { arguments: '1,"b":2}' } }] })}\n\n` +
  `data: ${chunk({}, 'tool_calls')}\n\n` +
  `data: ${usageChunk}\n\n` +
  'data: [DONE]\n\n';
const wholeReply = {
  content,
  toolCalls: [{ id: 'call_1', name: 'add', arguments: '{"a":1,"b":2}' }],
  usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 },
  finishReason: 'tool_calls',
};

describe('the reader of a streamed reply', () => {
  it('fed one byte at a time, it adds up to the whole reply, every character whole', async () => {
    async function* oneByteAtATime() {
      for (const piece of piecesOf(events, 1)) yield piece;
    }
    const deltas: LlmDelta[] = [];
    const reply = await readStreamedReply(oneByteAtATime(), { arrived: () => {}, onDelta: (d) => deltas.push(d) });
    expect(reply).toEqual(wholeReply);
    expect(deltas.map((d) => d.text ?? '').join('')).toBe(content);
  });
});

describe('a streamed reply on the wire', () => {
  it('in packets that cut events, lines and characters, it adds up to the whole reply', async () => {
    const pieces = piecesOf(events, 7);
    expect(cutsACharacter(pieces)).toBe(true);
    const { baseURL } = await serveBytes(pieces);
    const deltas: LlmDelta[] = [];
    const result = await llmFor(baseURL).complete(request, { onDelta: (d) => deltas.push(d) });
    expect(result).toEqual(
      ok({
        content,
        toolCalls: wholeReply.toolCalls,
        // Priced as gpt-4o-mini: $0.15 in, $0.60 out per million.
        usage: { inputTokens: 9, outputTokens: 4, costUsd: 0.00000375 },
        finishReason: 'tool_calls',
      }),
    );
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
    expect(result).toEqual(ok({ content: 'one two three', toolCalls: [], finishReason: 'stop' }));
  });

  it('an error the server sends inside the stream fails the call with its message, as the server’s', async () => {
    const { baseURL } = await serveBytes([
      `data: ${chunk({ role: 'assistant', content: 'Half an ans' })}\n\n`,
      `data: ${JSON.stringify({ error: { message: 'The upstream provider is overloaded', type: 'server_error' } })}\n\n`,
    ]);
    const deltas: LlmDelta[] = [];
    const result = await llmFor(baseURL).complete(request, { onDelta: (d) => deltas.push(d) });
    expect(result).toEqual(err({ kind: 'server', message: 'The upstream provider is overloaded' }));
    expect(deltas).toEqual([{ text: 'Half an ans' }]);
  });

  it('a numeric code is the status; a rate limit, an overlong context or a refusal is named as such', async () => {
    const failing = async (error: unknown) => {
      const { baseURL } = await serveBytes([`data: ${JSON.stringify({ error })}\n\n`]);
      const result = await llmFor(baseURL).complete(request);
      return result.isOk() ? undefined : result.error;
    };
    expect(await failing({ code: 502, message: 'Provider returned error' })).toEqual({
      kind: 'server',
      status: 502,
      message: 'Provider returned error',
    });
    expect(await failing({ code: 429, message: 'Slow down' })).toEqual({
      kind: 'rate_limit',
      status: 429,
      message: 'Slow down',
    });
    expect(
      await failing({ type: 'invalid_request_error', code: 'context_length_exceeded', message: 'Too long' }),
    ).toEqual({
      kind: 'context_length',
      message: 'Too long',
    });
    expect(await failing({ code: 400, message: 'Flagged by moderation' })).toEqual({
      kind: 'bad_request',
      status: 400,
      message: 'Flagged by moderation',
    });
    expect(await failing({ code: 500, message: 'Internal error' })).toEqual({
      kind: 'server',
      status: 500,
      message: 'Internal error',
    });
    expect(await failing({ type: 'rate_limit_error', message: 'Slow down' })).toEqual({
      kind: 'rate_limit',
      message: 'Slow down',
    });
    // A number that is no HTTP status is not taken for one.
    expect(await failing({ code: 1234, message: 'Odd' })).toEqual({ kind: 'server', message: 'Odd' });
    expect(await failing({ code: 'upstream_error', message: 'Named' })).toEqual({ kind: 'server', message: 'Named' });
    expect(await failing('Upstream down')).toEqual({ kind: 'server', message: 'Upstream down' });
    // No message to show: the error as sent.
    expect(await failing({ detail: 'no message' })).toEqual({ kind: 'server', message: '{"detail":"no message"}' });
    expect(await failing({ code: 503, message: { text: 'nested' } })).toEqual({
      kind: 'server',
      status: 503,
      message: '{"code":503,"message":{"text":"nested"}}',
    });
  });

  it('a rate-limited server’s error mid-reply is retried too', async () => {
    const { baseURL } = await serveBytes(
      [`data: ${JSON.stringify({ error: { code: 429, message: 'Slow down' } })}\n\n`],
      [`data: ${chunk({ role: 'assistant', content: 'Later' }, 'stop')}\n\n`, 'data: [DONE]\n\n'],
    );
    expect(await llmFor(baseURL, 1).complete(request)).toEqual(
      ok({ content: 'Later', toolCalls: [], finishReason: 'stop' }),
    );
  });

  it('chunks as servers vary them: no delta, no choices, usage early, an error field that is null, calls out of order', async () => {
    const frame = (body: object) =>
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', ...body })}\n\n`;
    const call = (index: number, id: string, args: string) => ({
      tool_calls: [{ index, id, type: 'function', function: { name: 'add', arguments: args } }],
    });
    const { baseURL } = await serveBytes([
      frame({ choices: [{ index: 0, delta: { role: 'assistant', content: 'Two sums.' } }], error: null }),
      // The second call first: the reply lists them by index.
      frame({ choices: [{ index: 0, delta: call(1, 'call_b', '{"a":3,"b":4}') }] }),
      frame({ choices: [{ index: 0, delta: call(0, 'call_a', '{"a":1,"b":2}') }] }),
      frame({ usage: { prompt_tokens: 5, completion_tokens: 6, total_tokens: 11 } }),
      frame({ choices: [{ index: 0, finish_reason: 'tool_calls' }] }),
      'data: [DONE]\n\n',
    ]);
    expect(await llmFor(baseURL).complete(request)).toEqual(
      ok({
        content: 'Two sums.',
        toolCalls: [
          { id: 'call_a', name: 'add', arguments: '{"a":1,"b":2}' },
          { id: 'call_b', name: 'add', arguments: '{"a":3,"b":4}' },
        ],
        usage: { inputTokens: 5, outputTokens: 6, costUsd: 0.00000435 },
        finishReason: 'tool_calls',
      }),
    );
  });

  it('an overloaded server’s error mid-reply is retried like a cut connection: the deltas start over', async () => {
    const { baseURL } = await serveBytes(
      [
        `data: ${chunk({ role: 'assistant', content: 'Half' })}\n\n`,
        `data: ${JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } })}\n\n`,
      ],
      [`data: ${chunk({ role: 'assistant', content: 'Whole' }, 'stop')}\n\n`, 'data: [DONE]\n\n'],
    );
    const deltas: LlmDelta[] = [];
    const result = await llmFor(baseURL, 1).complete(request, { onDelta: (d) => deltas.push(d) });
    expect(result).toEqual(ok({ content: 'Whole', toolCalls: [], finishReason: 'stop' }));
    expect(deltas).toEqual([{ text: 'Half' }, { restart: true }, { text: 'Whole' }]);
  });

  it('an overlong context reported mid-reply is not retried', async () => {
    const { baseURL } = await serveBytes(
      [`data: ${JSON.stringify({ error: { code: 'context_length_exceeded', message: 'Too long' } })}\n\n`],
      [`data: ${chunk({ role: 'assistant', content: 'never asked for' }, 'stop')}\n\n`, 'data: [DONE]\n\n'],
    );
    expect(await llmFor(baseURL, 3).complete(request)).toEqual(err({ kind: 'context_length', message: 'Too long' }));
  });

  it('a 200 whose JSON is an error in place of the completion is the server’s, and retried', async () => {
    const completion = {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Done.' }, finish_reason: 'stop' }],
    };
    const upstream = { error: { message: 'The upstream timed out', code: 504 } };
    const retried = await serveJson(upstream, completion);
    expect(await llmFor(retried.baseURL, 1, false).complete(request)).toEqual(
      ok({ content: 'Done.', toolCalls: [], finishReason: 'stop' }),
    );
    const failed = await serveJson(upstream);
    expect(await llmFor(failed.baseURL, 0, false).complete(request)).toEqual(
      err({ kind: 'server', status: 504, message: 'The upstream timed out' }),
    );
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
    expect(result).toEqual(ok({ content: 'kept', toolCalls: [], finishReason: 'stop' }));
    expect(deltas).toEqual([{ text: 'kept' }]);
  });

  it('an event that is not a JSON object is a malformed reply, named as such (the event cut short)', async () => {
    const refused = async (data: string) => {
      const { baseURL } = await serveBytes([`data: ${data}\n\n`, 'data: [DONE]\n\n']);
      return llmFor(baseURL).complete(request);
    };
    expect(await refused('42')).toEqual(
      err({ kind: 'malformed_response', message: 'a stream event is not a JSON object: 42' }),
    );
    expect(await refused('null')).toEqual(
      err({ kind: 'malformed_response', message: 'a stream event is not a JSON object: null' }),
    );
    const long = JSON.stringify('x'.repeat(200));
    expect(await refused(long)).toEqual(
      err({ kind: 'malformed_response', message: `a stream event is not a JSON object: ${long.slice(0, 100)}` }),
    );
  });
});
