// Gemini through the AI SDK's Google provider (@ai-sdk/google), against the Gemini stand-in.
import { describe, expect, it } from 'vitest';
import type { Message } from '../src/kernel/messages.js';
import { createGoogleLlm, type GoogleLlmOptions } from '../src/llm/google.js';
import type { LlmDelta } from '../src/llm/llm.js';
import { err, ok } from '../src/result.js';
import { run } from '../src/shell/run.js';
import {
  type GeminiPart,
  type GeminiServer,
  type RecordedGeminiRequest,
  startGeminiServer,
} from '../src/testing/geminiServer.js';
import { checkLlmPort } from '../src/testing/portConformance.js';
import { askBriefly, calculator, PIXEL, question, weather } from './portFixtures.js';
import { useStandIns } from './servers.js';

const serve = useStandIns(startGeminiServer);
const llmFor = (server: GeminiServer, extra: Partial<GoogleLlmOptions> = {}) =>
  createGoogleLlm({ model: 'gemini-2.5-flash', apiKey: 'test-key', baseURL: server.baseURL, maxRetries: 2, ...extra });

const partsOf = (request: RecordedGeminiRequest | undefined, role: string): GeminiPart[] =>
  (request?.contents ?? []).filter((c) => c.role === role).flatMap((c) => c.parts);

describe('createGoogleLlm against the Gemini stand-in', () => {
  it('streams text to onDelta and answers it whole, with the system prompt as the system instruction', async () => {
    const server = await serve([{ content: 'Kyoto is lovely in autumn, they say.' }]);
    const deltas: LlmDelta[] = [];
    const result = await llmFor(server, { stream: true }).complete(question('Where to go?'), {
      onDelta: (d) => deltas.push(d),
    });
    expect(result).toMatchObject(ok({ content: 'Kyoto is lovely in autumn, they say.', finishReason: 'stop' }));
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((d) => d.text).join('')).toBe('Kyoto is lovely in autumn, they say.');
    expect(server.paths).toEqual(['/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse']);
    expect(server.requests[0]?.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }] });
    expect(server.requests[0]?.contents).toEqual([{ role: 'user', parts: [{ text: 'Where to go?' }] }]);
  });

  it('asks generateContent when not streaming, and says when the reply hit the output limit', async () => {
    const server = await serve([{ content: 'Kyoto is', finishReason: 'length' }]);
    const result = await llmFor(server, { maxTokens: 3, temperature: 0.2 }).complete(question('Where to go?'));
    expect(result).toMatchObject(ok({ content: 'Kyoto is', finishReason: 'length' }));
    expect(server.paths).toEqual(['/v1beta/models/gemini-2.5-flash:generateContent']);
    expect(server.requests[0]?.generationConfig).toMatchObject({ maxOutputTokens: 3, temperature: 0.2 });
  });

  it('gives function calls as tool calls, streamed as deltas, and sends them and their results back', async () => {
    const server = await serve([
      {
        content: 'Looking it up.',
        toolCalls: [
          { name: 'get_weather', arguments: { city: 'Kyoto' } },
          { name: 'get_weather', arguments: { city: 'Osaka' } },
        ],
      },
      { content: 'Sunny in both.' },
    ]);
    const llm = llmFor(server, { stream: true });
    const deltas: LlmDelta[] = [];
    const first = await llm.complete(
      { ...question('Weather in Kyoto and Osaka?'), tools: [weather], toolChoice: 'required' },
      {
        onDelta: (d) => deltas.push(d),
      },
    );
    if (!first.isOk()) throw new Error(first.error.message);
    const { toolCalls } = first.value;
    expect(first.value.finishReason).toBe('tool_calls');
    expect(toolCalls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
      ['get_weather', { city: 'Kyoto' }],
      ['get_weather', { city: 'Osaka' }],
    ]);
    const callDeltas = deltas.flatMap((d) => (d.toolCall ? [d.toolCall] : []));
    expect(callDeltas.filter((d) => d.name).map((d) => [d.index, d.id, d.name])).toEqual([
      [0, toolCalls[0]?.id, 'get_weather'],
      [1, toolCalls[1]?.id, 'get_weather'],
    ]);
    expect(
      callDeltas
        .filter((d) => d.index === 1)
        .map((d) => d.arguments ?? '')
        .join(''),
    ).toBe(toolCalls[1]?.arguments);
    expect(server.requests[0]?.tools).toEqual([
      {
        functionDeclarations: [expect.objectContaining({ name: 'get_weather', description: 'The weather in a city.' })],
      },
    ]);
    expect(server.requests[0]?.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });

    const second = await llm.complete(
      askBriefly(
        [
          { role: 'user', content: 'Weather in Kyoto and Osaka?' },
          { role: 'assistant', content: 'Looking it up.', toolCalls },
          { role: 'tool', toolCallId: toolCalls[0]?.id ?? '', name: 'get_weather', content: 'Sunny, 21 °C' },
          { role: 'tool', toolCallId: toolCalls[1]?.id ?? '', name: 'get_weather', content: 'Sunny, 23 °C' },
        ],
        { tools: [weather] },
      ),
    );
    expect(second).toMatchObject(ok({ content: 'Sunny in both.' }));
    expect(partsOf(server.requests[1], 'model')).toEqual([
      { text: 'Looking it up.' },
      { functionCall: { id: toolCalls[0]?.id, name: 'get_weather', args: { city: 'Kyoto' } } },
      { functionCall: { id: toolCalls[1]?.id, name: 'get_weather', args: { city: 'Osaka' } } },
    ]);
    // Both results in one turn, as Gemini wants a turn's function responses.
    const turns = server.requests[1]?.contents ?? [];
    expect(turns.map((turn) => turn.role)).toEqual(['user', 'model', 'user']);
    const responses = turns[2]?.parts.flatMap((p) => (p.functionResponse ? [p.functionResponse] : []));
    expect(responses).toEqual([
      { id: toolCalls[0]?.id, name: 'get_weather', response: { name: 'get_weather', content: 'Sunny, 21 °C' } },
      { id: toolCalls[1]?.id, name: 'get_weather', response: { name: 'get_weather', content: 'Sunny, 23 °C' } },
    ]);
  });

  it('reports usage with cached and thought tokens, priced', async () => {
    const usage = { inputTokens: 12_000, outputTokens: 500, cachedInputTokens: 9_000, reasoningTokens: 200 };
    const server = await serve([
      { content: 'Hi!', usage },
      { content: 'Hi!', usage },
    ]);
    const price = { input: 0.3, cachedInput: 0.03, output: 2.5 };
    for (const stream of [false, true]) {
      const result = await llmFor(server, { stream, price }).complete(question('hi'));
      expect(result).toMatchObject(
        ok({
          usage: { ...usage, costUsd: (3_000 * 0.3 + 9_000 * 0.03 + 500 * 2.5) / 1e6 },
        }),
      );
    }
  });

  it('leaves the cost unknown where the built-in table has no cached price for the model', async () => {
    const server = await serve([
      { content: 'Hi!', usage: { inputTokens: 100, outputTokens: 5, cachedInputTokens: 80 } },
    ]);
    const result = await llmFor(server).complete(question('hi'));
    expect(result.isOk() && result.value.usage).toEqual({ inputTokens: 100, outputTokens: 5, cachedInputTokens: 80 });
  });

  it('keeps thoughts and the signed function call, and sends both back as Gemini signed them', async () => {
    const server = await serve([
      {
        reasoning: [
          { text: 'The user wants the weather.', signature: 'sig-thought' },
          { text: '', signature: 'sig-call' },
        ],
        toolCalls: [{ name: 'get_weather', arguments: { city: 'Kyoto' } }],
      },
      { content: 'Sunny.' },
    ]);
    const llm = llmFor(server, { stream: true });
    const first = await llm.complete({ ...question('Weather in Kyoto?'), tools: [weather] });
    if (!first.isOk()) throw new Error(first.error.message);
    expect(first.value.reasoning).toEqual([
      { text: 'The user wants the weather.', signature: 'sig-thought' },
      { text: '', signature: 'sig-call' },
    ]);
    const { toolCalls, reasoning } = first.value;
    await llm.complete(
      askBriefly(
        [
          { role: 'user', content: 'Weather in Kyoto?' },
          { role: 'assistant', content: '', toolCalls, ...(reasoning ? { reasoning } : {}) },
          { role: 'tool', toolCallId: toolCalls[0]?.id ?? '', name: 'get_weather', content: 'Sunny' },
        ],
        { tools: [weather] },
      ),
    );
    expect(partsOf(server.requests[1], 'model')).toEqual([
      { text: 'The user wants the weather.', thought: true, thoughtSignature: 'sig-thought' },
      {
        functionCall: { id: toolCalls[0]?.id, name: 'get_weather', args: { city: 'Kyoto' } },
        thoughtSignature: 'sig-call',
      },
    ]);
  });

  it('sends user and tool images as inline data when the model has vision, and none without', async () => {
    const messages: Message[] = [
      { role: 'user', content: 'What is this?', image: PIXEL },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'screenshot', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'c1', name: 'screenshot', content: 'the screen', image: PIXEL },
    ];
    const server = await serve([{ content: 'A pixel.' }, { content: 'Something.' }]);
    await llmFor(server, { vision: true }).complete(askBriefly(messages));
    await llmFor(server).complete(askBriefly(messages));
    const inline = (request: RecordedGeminiRequest | undefined) =>
      JSON.stringify(request?.contents ?? []).split(`"data":"${PIXEL.base64}"`).length - 1;
    expect(partsOf(server.requests[0], 'user')[1]).toEqual({
      inlineData: { mimeType: 'image/png', data: PIXEL.base64 },
    });
    expect(inline(server.requests[0])).toBe(2);
    expect(inline(server.requests[1])).toBe(0);
  });

  it('retries a 429 with Retry-After, then answers', async () => {
    const server = await serve([
      { error: { status: 429, message: 'Resource has been exhausted (e.g. check quota).', retryAfter: 0 } },
      { content: 'done' },
    ]);
    const result = await llmFor(server).complete(question('hi'));
    expect(result).toMatchObject(ok({ content: 'done' }));
    expect(server.hits).toBe(2);
  });

  it("reads Google's errors by kind, with the wait a rate limit asks for", async () => {
    const server = await serve([
      { error: { status: 429, message: 'Resource has been exhausted (e.g. check quota).', retryAfter: 7 } },
      { error: { status: 503, message: 'The model is overloaded. Please try again later.' } },
      { error: { status: 403, message: "Method doesn't allow unregistered callers." } },
      { error: { status: 400, message: 'API key not valid. Please pass a valid API key.' } },
      {
        error: {
          status: 400,
          message: 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).',
        },
      },
      { error: { status: 500, message: 'An internal error has occurred.' } },
    ]);
    const llm = llmFor(server, { maxRetries: 0 });
    const errors = [];
    for (let i = 0; i < 6; i++) {
      const result = await llm.complete(question('hi'));
      errors.push(
        result.isOk()
          ? undefined
          : { kind: result.error.kind, status: result.error.status, wait: result.error.retryAfterMs },
      );
    }
    expect(errors).toEqual([
      { kind: 'rate_limit', status: 429, wait: 7000 },
      { kind: 'overloaded', status: 503, wait: undefined },
      { kind: 'auth', status: 403, wait: undefined },
      { kind: 'bad_request', status: 400, wait: undefined },
      { kind: 'context_length', status: 400, wait: undefined },
      { kind: 'server', status: 500, wait: undefined },
    ]);
  });

  it('retries an overloaded model, but not a refused key', async () => {
    const server = await serve([
      { error: { status: 503, message: 'The model is overloaded. Please try again later.' } },
      { error: { status: 503, message: 'The model is overloaded. Please try again later.' } },
      { content: 'at last' },
      { error: { status: 403, message: 'Permission denied.' } },
    ]);
    const llm = llmFor(server);
    expect(await llm.complete(question('hi'))).toMatchObject(ok({ content: 'at last' }));
    expect(await llm.complete(question('hi'))).toMatchObject(err({ kind: 'auth' }));
    expect(server.hits).toBe(4);
  });

  it('retries a cut stream and an error chunk in the stream, telling onDelta to start over', async () => {
    const server = await serve([
      { content: 'The first try breaks off here.', cutAfter: 1 },
      { content: 'The second try hits a quota.', midStreamError: { after: 1, type: 'RESOURCE_EXHAUSTED' } },
      { content: 'The third try is whole.' },
    ]);
    const deltas: LlmDelta[] = [];
    const result = await llmFor(server, { stream: true }).complete(question('hi'), { onDelta: (d) => deltas.push(d) });
    expect(result).toMatchObject(ok({ content: 'The third try is whole.' }));
    expect(server.hits).toBe(3);
    expect(deltas.filter((d) => d.restart)).toHaveLength(2);
    const afterLastRestart = deltas.slice(deltas.findLastIndex((d) => d.restart) + 1);
    expect(afterLastRestart.map((d) => d.text).join('')).toBe('The third try is whole.');
  });

  it('retries a non-streamed reply cut mid-body', async () => {
    const server = await serve([{ content: 'whole', cutAfter: 2 }, { content: 'whole' }]);
    expect(await llmFor(server).complete(question('hi'))).toMatchObject(ok({ content: 'whole' }));
    expect(server.hits).toBe(2);
  });

  it('stops at once when aborted mid-stream, and times out a stalled stream', async () => {
    const server = await serve([
      { content: 'This reply stalls after its first piece.', stallAfter: 1 },
      { content: 'This one stalls too, until the idle timer.', stallAfter: 1 },
    ]);
    const controller = new AbortController();
    const aborted = await llmFor(server, { stream: true }).complete(question('hi'), {
      signal: controller.signal,
      onDelta: () => controller.abort(),
    });
    expect(aborted).toMatchObject(err({ kind: 'aborted' }));
    const idle = await llmFor(server, { stream: true, idleTimeoutMs: 50, maxRetries: 0 }).complete(question('hi'));
    expect(idle).toMatchObject(err({ kind: 'timeout' }));
  });

  it('is a configuration error without an API key', async () => {
    const saved = process.env.GOOGLE_GENERATIVE_AI_API_KEY;
    delete process.env.GOOGLE_GENERATIVE_AI_API_KEY;
    try {
      const server = await serve([{ content: 'never' }]);
      const llm = createGoogleLlm({ model: 'gemini-2.5-flash', baseURL: server.baseURL });
      expect(await llm.complete(question('hi'))).toMatchObject(err({ kind: 'config' }));
      expect(server.hits).toBe(0);
    } finally {
      if (saved !== undefined) process.env.GOOGLE_GENERATIVE_AI_API_KEY = saved;
    }
  });

  it('checks its options when made', () => {
    expect(() => createGoogleLlm({ model: 'gemini-2.5-flash', maxRetries: -1 })).toThrow(RangeError);
    expect(() => createGoogleLlm({ model: 'gemini-2.5-flash', timeoutMs: 0 })).toThrow(RangeError);
    expect(() => createGoogleLlm({ model: 'gemini-2.5-flash', maxConcurrentRequests: 0 })).toThrow(RangeError);
  });

  it('calls tools in the prompt tool mode, for models without function calling', async () => {
    const server = await serve([
      { content: 'Checking.\n<tool_call>{"name": "get_weather", "arguments": {"city": "Kyoto"}}</tool_call>' },
    ]);
    const result = await llmFor(server, { toolMode: 'prompt' }).complete({ ...question('Weather?'), tools: [weather] });
    expect(result).toMatchObject(
      ok({
        content: 'Checking.',
        toolCalls: [{ name: 'get_weather', arguments: '{"city":"Kyoto"}' }],
        finishReason: 'tool_calls',
      }),
    );
    expect(server.requests[0]?.tools).toBeUndefined();
    expect(server.requests[0]?.systemInstruction?.parts[0]?.text).toContain('<tool_call>');
  });

  it('runs an agent with a tool to its answer', async () => {
    const server = await serve([
      { toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] },
      { content: 'It is 5.', usage: { inputTokens: 50, outputTokens: 4 } },
    ]);
    const result = await run(calculator(), 'What is 2 + 3?', { llm: llmFor(server, { stream: true }) });
    expect(result).toMatchObject({ status: 'finished', finishReason: 'answered', answer: 'It is 5.' });
    expect(result.usage.llmCalls).toBe(2);
    server.assertConsumed();
    const [response] = partsOf(server.requests[1], 'user').flatMap((p) =>
      p.functionResponse ? [p.functionResponse] : [],
    );
    expect(response).toMatchObject({ name: 'add', response: { content: '5' } });
  });

  it('passes the port conformance kit, streamed and not, thoughts included', async () => {
    const report = await checkLlmPort({
      connect: async (script, { stream }) => {
        const server = await startGeminiServer({ script });
        return { port: llmFor(server, { stream, vision: true, maxRetries: 3 }), close: () => server.close() };
      },
      capabilities: { reasoning: true },
      overloaded: { status: 503, message: 'The model is overloaded. Please try again later.', type: 'UNAVAILABLE' },
    });
    expect(report.failures.map((c) => `${c.name}: ${c.detail}`)).toEqual([]);
    expect(report.checks.filter((c) => c.status === 'not applicable')).toEqual([]);
  });
});
