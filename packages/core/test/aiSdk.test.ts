// fromAiSdk: with the AI SDK's own mock models (its simulated streams), and with real providers of
// the AI SDK (@ai-sdk/openai-compatible, @ai-sdk/anthropic, @ai-sdk/amazon-bedrock) against our local stand-ins.
import { createAmazonBedrock } from '@ai-sdk/amazon-bedrock';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import {
  APICallError,
  type LanguageModelV4GenerateResult,
  type LanguageModelV4Message,
  type LanguageModelV4StreamPart,
  type LanguageModelV4Usage,
  LoadAPIKeyError,
} from '@ai-sdk/provider';
import { MockLanguageModelV3, MockLanguageModelV4, simulateReadableStream } from 'ai/test';
import { describe, expect, it } from 'vitest';
import type { Message } from '../src/kernel/messages.js';
import { fromAiSdk } from '../src/llm/aiSdk.js';
import type { LlmDelta } from '../src/llm/llm.js';
import { err, ok } from '../src/result.js';
import { run } from '../src/shell/run.js';
import { type AnthropicServer, startAnthropicServer } from '../src/testing/anthropicServer.js';
import { type BedrockServer, type RecordedBedrockRequest, startBedrockServer } from '../src/testing/bedrockServer.js';
import { checkLlmPort } from '../src/testing/portConformance.js';
import type { ScriptEntry } from '../src/testing/script.js';
import { type OpenAiServer, startOpenAiServer } from '../src/testing/server.js';
import { askBriefly, calculator, PIXEL, question, weather } from './portFixtures.js';
import { useStandIns } from './servers.js';

const usage = (
  input: number,
  output: number,
  more: { cacheRead?: number; cacheWrite?: number; reasoning?: number } = {},
) =>
  ({
    inputTokens: {
      total: input,
      noCache: input - (more.cacheRead ?? 0) - (more.cacheWrite ?? 0),
      cacheRead: more.cacheRead,
      cacheWrite: more.cacheWrite,
    },
    outputTokens: { total: output, text: output - (more.reasoning ?? 0), reasoning: more.reasoning },
  }) satisfies LanguageModelV4Usage;

const streamOf = (parts: LanguageModelV4StreamPart[]) => ({ stream: simulateReadableStream({ chunks: parts }) });
const finish = (reason: 'stop' | 'tool-calls' | 'length', used = usage(10, 2)): LanguageModelV4StreamPart => ({
  type: 'finish',
  finishReason: { unified: reason, raw: undefined },
  usage: used,
});
const textStream = (text: string): LanguageModelV4StreamPart[] => [
  { type: 'stream-start', warnings: [] },
  { type: 'text-start', id: 't' },
  { type: 'text-delta', id: 't', delta: text },
  { type: 'text-end', id: 't' },
  finish('stop'),
];
const generated = (content: LanguageModelV4GenerateResult['content']): LanguageModelV4GenerateResult => ({
  content,
  finishReason: { unified: 'stop', raw: 'stop' },
  usage: usage(10, 2),
  warnings: [],
});

/** A model answering each request with the next of `answers` (a stream's parts, or an error to throw). */
function mockModel(provider: string, modelId: string, answers: (LanguageModelV4StreamPart[] | Error)[]) {
  let next = 0;
  return new MockLanguageModelV4({
    provider,
    modelId,
    doStream: async () => {
      const answer = answers[next++];
      if (!answer) throw new Error('the mock has no more answers');
      if (answer instanceof Error) throw answer;
      return streamOf(answer);
    },
  });
}

const promptOf = (model: MockLanguageModelV4, call: number) => model.doStreamCalls[call]?.prompt ?? [];
const role = (prompt: readonly LanguageModelV4Message[], name: string) => prompt.filter((m) => m.role === name);

describe('fromAiSdk with the AI SDK mock model', () => {
  it('streams text and tool calls with their input in pieces, and reads usage, reasoning and the finish reason', async () => {
    const model = mockModel('anthropic.messages', 'claude-sonnet-4-5', [
      [
        { type: 'stream-start', warnings: [] },
        { type: 'reasoning-start', id: 'r' },
        { type: 'reasoning-delta', id: 'r', delta: 'They want the weather.' },
        { type: 'reasoning-delta', id: 'r', delta: '', providerMetadata: { anthropic: { signature: 'sig-1' } } },
        { type: 'reasoning-end', id: 'r' },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Let me ' },
        { type: 'text-delta', id: 't', delta: 'look.' },
        { type: 'text-end', id: 't' },
        { type: 'tool-input-start', id: 'call-1', toolName: 'get_weather' },
        { type: 'tool-input-delta', id: 'call-1', delta: '{"city":' },
        { type: 'tool-input-delta', id: 'call-1', delta: '"Kyoto"}' },
        { type: 'tool-input-end', id: 'call-1' },
        { type: 'tool-call', toolCallId: 'call-1', toolName: 'get_weather', input: '{"city":"Kyoto"}' },
        finish('tool-calls', usage(1_000, 50, { cacheRead: 800, cacheWrite: 100, reasoning: 20 })),
      ],
    ]);
    const deltas: LlmDelta[] = [];
    const result = await fromAiSdk(model, { stream: true }).complete(
      askBriefly([{ role: 'user', content: 'Kyoto?' }], { tools: [weather] }),
      {
        onDelta: (d) => deltas.push(d),
      },
    );
    expect(deltas).toEqual([
      { text: 'Let me ' },
      { text: 'look.' },
      { toolCall: { index: 0, id: 'call-1', name: 'get_weather' } },
      { toolCall: { index: 0, arguments: '{"city":' } },
      { toolCall: { index: 0, arguments: '"Kyoto"}' } },
    ]);
    // claude-sonnet-4-5 at $3 in, $0.30 cached, $3.75 written, $15 out per million.
    expect(result).toEqual(
      ok({
        content: 'Let me look.',
        toolCalls: [{ id: 'call-1', name: 'get_weather', arguments: '{"city":"Kyoto"}' }],
        reasoning: [{ text: 'They want the weather.', signature: 'sig-1' }],
        finishReason: 'tool_calls',
        usage: {
          inputTokens: 1_000,
          outputTokens: 50,
          cachedInputTokens: 800,
          cacheWriteTokens: 100,
          reasoningTokens: 20,
          costUsd: (100 * 3 + 800 * 0.3 + 100 * 3.75 + 50 * 15) / 1e6,
        },
      }),
    );
    expect(model.doStreamCalls[0]).toMatchObject({
      tools: [
        {
          type: 'function',
          name: 'get_weather',
          description: 'The weather in a city.',
          inputSchema: weather.parameters,
        },
      ],
      toolChoice: { type: 'auto' },
    });
  });

  it('sends the history back: reasoning with its signature, calls as objects, results, and the cache mark at the stable prefix', async () => {
    const model = mockModel('anthropic.messages', 'claude-sonnet-4-5', [textStream('Sunny.')]);
    const history: Message[] = [
      { role: 'user', content: 'Kyoto?' },
      {
        role: 'assistant',
        content: 'Let me look.',
        toolCalls: [{ id: 'call-1', name: 'get_weather', arguments: '{"city":"Kyoto"}' }],
        reasoning: [
          { text: 'They want the weather.', signature: 'sig-1' },
          { text: '', redacted: 'opaque' },
        ],
      },
      { role: 'tool', toolCallId: 'call-1', name: 'get_weather', content: 'Sunny, 21 °C' },
      { role: 'user', content: 'And tomorrow?' },
    ];
    await fromAiSdk(model, { stream: true }).complete(
      askBriefly(history, { tools: [weather], cache: { key: 'run-1', stableMessages: 4 } }),
    );
    const prompt = promptOf(model, 0);
    // The mark on the stable prefix's last message, a tool result: on its part.
    expect(prompt.map((m) => m.providerOptions)).toEqual([undefined, undefined, undefined, undefined, undefined]);
    expect(role(prompt, 'assistant')[0]?.content).toEqual([
      { type: 'reasoning', text: 'They want the weather.', providerOptions: { anthropic: { signature: 'sig-1' } } },
      { type: 'reasoning', text: '', providerOptions: { anthropic: { redactedData: 'opaque' } } },
      { type: 'text', text: 'Let me look.' },
      { type: 'tool-call', toolCallId: 'call-1', toolName: 'get_weather', input: { city: 'Kyoto' } },
    ]);
    expect(role(prompt, 'tool')[0]?.content).toEqual([
      {
        type: 'tool-result',
        toolCallId: 'call-1',
        toolName: 'get_weather',
        output: { type: 'text', value: 'Sunny, 21 °C' },
        providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } },
      },
    ]);
    // No OpenAI cache key for a model that is not OpenAI's.
    expect(model.doStreamCalls[0]?.providerOptions).toBeUndefined();
  });

  it("marks Bedrock's cache point, and gives OpenAI models the run's prompt cache key", async () => {
    const bedrock = mockModel('amazon-bedrock', 'anthropic.claude-3-5-haiku', [textStream('ok')]);
    const openai = mockModel('openai.responses', 'gpt-4o-mini', [textStream('ok'), textStream('ok')]);
    const request = askBriefly([{ role: 'user', content: 'hi' }], { cache: { key: 'run-1', stableMessages: 1 } });
    await fromAiSdk(bedrock, { stream: true }).complete(request);
    expect(promptOf(bedrock, 0)[0]?.providerOptions).toEqual({ bedrock: { cachePoint: { type: 'default' } } });
    await fromAiSdk(openai, { stream: true, providerOptions: { openai: { store: false } } }).complete(request);
    expect(promptOf(openai, 0).map((m) => m.providerOptions)).toEqual([undefined, undefined]);
    expect(openai.doStreamCalls[0]?.providerOptions).toEqual({ openai: { store: false, promptCacheKey: 'run-1' } });
    await fromAiSdk(openai, { stream: true, promptCacheKey: false }).complete(request);
    expect(openai.doStreamCalls[1]?.providerOptions).toBeUndefined();
  });

  it('takes a v3 model (AI SDK 6) whole: images inline, tool images as image data, the settings', async () => {
    const model = new MockLanguageModelV3({
      provider: 'mock',
      modelId: 'mock-vision',
      doGenerate: async () => ({
        content: [
          { type: 'reasoning', text: 'A tiny image.' },
          { type: 'text', text: 'One pixel.' },
        ],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: usage(30, 3),
        warnings: [],
      }),
    });
    const result = await fromAiSdk(model, { vision: true, maxTokens: 100, temperature: 0.5 }).complete(
      askBriefly(
        [
          { role: 'user', content: 'What is this?', image: PIXEL },
          { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'screenshot', arguments: 'not json' }] },
          { role: 'tool', toolCallId: 'c1', name: 'screenshot', content: 'the screen', image: PIXEL },
        ],
        { tools: [weather], toolChoice: 'none' },
      ),
    );
    expect(result).toEqual(
      ok({
        content: 'One pixel.',
        toolCalls: [],
        reasoning: [{ text: 'A tiny image.' }],
        finishReason: 'stop',
        usage: { inputTokens: 30, outputTokens: 3 },
      }),
    );
    const call = model.doGenerateCalls[0];
    expect(call).toMatchObject({ maxOutputTokens: 100, temperature: 0.5, toolChoice: { type: 'none' } });
    const prompt = call?.prompt ?? [];
    expect(prompt[1]?.content).toEqual([
      { type: 'text', text: 'What is this?' },
      { type: 'file', mediaType: 'image/png', data: PIXEL.base64 },
    ]);
    // Malformed arguments go back as an empty object: the provider would refuse the request over them.
    expect(prompt[2]?.content).toEqual([{ type: 'tool-call', toolCallId: 'c1', toolName: 'screenshot', input: {} }]);
    expect(prompt[3]?.content).toEqual([
      {
        type: 'tool-result',
        toolCallId: 'c1',
        toolName: 'screenshot',
        output: {
          type: 'content',
          value: [
            { type: 'text', text: 'the screen' },
            { type: 'image-data', data: PIXEL.base64, mediaType: 'image/png' },
          ],
        },
      },
    ]);
  });

  it('leaves images out for a model without vision', async () => {
    const model = mockModel('mock', 'mock-text', [textStream('ok')]);
    await fromAiSdk(model, { stream: true }).complete(
      askBriefly([{ role: 'user', content: 'What is this?', image: PIXEL }]),
    );
    expect(promptOf(model, 0)[1]?.content).toEqual([{ type: 'text', text: 'What is this?' }]);
  });

  it('retries a 429 after its Retry-After, an overloaded stream and a cut one, with restarts; not a refused key', async () => {
    const limited = new APICallError({
      message: 'Too many requests',
      url: 'http://127.0.0.1/',
      requestBodyValues: {},
      statusCode: 429,
      responseHeaders: { 'retry-after': '0' },
    });
    const refused = new APICallError({ message: 'invalid x-api-key', url: '', requestBodyValues: {}, statusCode: 401 });
    const model = mockModel('anthropic.messages', 'claude-sonnet-4-5', [
      limited,
      [
        { type: 'text-delta', id: 't', delta: 'Half' },
        { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
      ],
      [{ type: 'text-delta', id: 't', delta: 'Cut' }],
      textStream('Whole.'),
      refused,
    ]);
    const llm = fromAiSdk(model, { stream: true });
    const deltas: LlmDelta[] = [];
    expect(await llm.complete(question('hi'), { onDelta: (d) => deltas.push(d) })).toMatchObject(
      ok({ content: 'Whole.' }),
    );
    expect(deltas).toEqual([
      { restart: true },
      { text: 'Half' },
      { restart: true },
      { text: 'Cut' },
      { restart: true },
      { text: 'Whole.' },
    ]);
    expect(await llm.complete(question('hi'))).toMatchObject(err({ kind: 'auth', status: 401 }));
    expect(model.doStreamCalls).toHaveLength(5);
  });

  it('reads errors by kind: the wait a rate limit asks for, a context too long, a missing key', async () => {
    const failing = (error: Error) => fromAiSdk(mockModel('mock', 'm', [error]), { stream: true, maxRetries: 0 });
    const apiError = (statusCode: number, message: string, headers?: Record<string, string>) =>
      new APICallError({
        message,
        url: '',
        requestBodyValues: {},
        statusCode,
        ...(headers ? { responseHeaders: headers } : {}),
      });
    const kinds = [];
    for (const error of [
      apiError(429, 'slow down', { 'retry-after': '7' }),
      apiError(529, 'Overloaded'),
      apiError(400, 'prompt is too long: 210000 tokens > 200000 maximum'),
      apiError(400, 'tools.0.name: bad'),
      apiError(502, 'Bad gateway'),
      new LoadAPIKeyError({ message: 'Anthropic API key is missing.' }),
    ]) {
      const result = await failing(error).complete(question('hi'));
      kinds.push(result.isOk() ? undefined : [result.error.kind, result.error.retryAfterMs]);
    }
    expect(kinds).toEqual([
      ['rate_limit', 7000],
      ['overloaded', undefined],
      ['context_length', undefined],
      ['bad_request', undefined],
      ['server', undefined],
      ['config', undefined],
    ]);
  });

  it('ends at once when aborted, even where the model ignores the signal', async () => {
    const model = new MockLanguageModelV4({
      doStream: async () => ({
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          start(controller) {
            controller.enqueue({ type: 'text-delta', id: 't', delta: 'Never ' });
          },
        }),
      }),
    });
    const controller = new AbortController();
    const deltas: LlmDelta[] = [];
    const result = await fromAiSdk(model, { stream: true }).complete(question('hi'), {
      signal: controller.signal,
      onDelta: (d) => {
        deltas.push(d);
        controller.abort();
      },
    });
    expect(result).toMatchObject(err({ kind: 'aborted' }));
    expect(deltas).toEqual([{ text: 'Never ' }]);
  });

  it("throws a delta listener's error, as the port's contract says", async () => {
    const model = mockModel('mock', 'm', [textStream('hi')]);
    const llm = fromAiSdk(model, { stream: true });
    await expect(
      llm.complete(question('hi'), {
        onDelta: () => {
          throw new Error('listener broke');
        },
      }),
    ).rejects.toThrow('listener broke');
  });

  it('parses calls from the text in the prompt tool mode', async () => {
    const model = new MockLanguageModelV4({
      doGenerate: async () =>
        generated([
          { type: 'text', text: '<tool_call>{"name": "get_weather", "arguments": {"city": "Kyoto"}}</tool_call>' },
        ]),
    });
    const result = await fromAiSdk(model, { toolMode: 'prompt' }).complete({ ...question('Kyoto?'), tools: [weather] });
    expect(result).toMatchObject(
      ok({
        content: '',
        toolCalls: [{ name: 'get_weather', arguments: '{"city":"Kyoto"}' }],
        finishReason: 'tool_calls',
      }),
    );
    const call = model.doGenerateCalls[0];
    expect(call?.tools).toBeUndefined();
    expect(call?.prompt[0]).toMatchObject({ role: 'system', content: expect.stringContaining('get_weather') });
  });

  it('keeps the cache mark on the stable prefix when the prompt tool mode puts its tools prompt in front', async () => {
    const model = mockModel('anthropic.messages', 'claude-sonnet-4-5', [textStream('ok')]);
    const messages: Message[] = [
      { role: 'user', content: 'Kyoto?' },
      { role: 'assistant', content: 'Hm.' },
      { role: 'user', content: 'Weather, please.' },
    ];
    await fromAiSdk(model, { stream: true, toolMode: 'prompt' }).complete({
      messages,
      tools: [weather],
      toolChoice: 'auto',
      cache: { stableMessages: 2 },
    });
    const prompt = promptOf(model, 0);
    expect(prompt.map((m) => [m.role, m.providerOptions])).toEqual([
      ['system', undefined],
      ['user', undefined],
      ['assistant', { anthropic: { cacheControl: { type: 'ephemeral' } } }],
      ['user', undefined],
    ]);
  });

  it('refuses what is not a language model of the AI SDK, and bad options', () => {
    expect(() => fromAiSdk({ specificationVersion: 'v2' } as never)).toThrow(/specification v4 or v3, got v2/);
    expect(() => fromAiSdk(mockModel('mock', 'm', []), { maxRetries: 1.5 })).toThrow(RangeError);
  });
});

describe('fromAiSdk over @ai-sdk/openai-compatible, against the local OpenAI-compatible server', () => {
  const serve = useStandIns(startOpenAiServer);
  const modelOf = (server: OpenAiServer) =>
    createOpenAICompatible({ name: 'local', baseURL: server.baseURL, apiKey: 'sk-test', includeUsage: true }).chatModel(
      'gpt-4o-mini',
    );

  it('streams text and a tool call with its arguments in pieces, and prices the usage with its cached tokens', async () => {
    const server = await serve([
      {
        content: 'Looking it up for you now.',
        toolCalls: [{ name: 'get_weather', arguments: { city: 'Kyoto, the old capital' } }],
        usage: { inputTokens: 2_000, outputTokens: 40, cachedInputTokens: 1_500 },
      },
    ]);
    const deltas: LlmDelta[] = [];
    const result = await fromAiSdk(modelOf(server), { stream: true }).complete(
      { ...question('Kyoto?'), tools: [weather] },
      { onDelta: (d) => deltas.push(d) },
    );
    // gpt-4o-mini at $0.15 in, $0.075 cached, $0.60 out per million.
    expect(result).toEqual(
      ok({
        content: 'Looking it up for you now.',
        toolCalls: [{ id: 'call_0_0', name: 'get_weather', arguments: '{"city":"Kyoto, the old capital"}' }],
        finishReason: 'tool_calls',
        usage: {
          inputTokens: 2_000,
          outputTokens: 40,
          cachedInputTokens: 1_500,
          costUsd: (500 * 0.15 + 1_500 * 0.075 + 40 * 0.6) / 1e6,
        },
      }),
    );
    const pieces = deltas.flatMap((d) => (d.toolCall?.arguments ? [d.toolCall.arguments] : []));
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join('')).toBe('{"city":"Kyoto, the old capital"}');
    expect(server.requests[0]).toMatchObject({
      stream: true,
      tool_choice: 'auto',
      tools: [{ function: { name: 'get_weather' } }],
    });
  });

  it('retries a 429 and a cut stream, and reads a refused key and an overlong context', async () => {
    const server = await serve([
      { error: { status: 429, message: 'slow down', retryAfter: 0 } },
      { content: 'This reply is cut off half way through.', cutAfter: 2 },
      { content: 'Whole.' },
      { error: { status: 401, message: 'Incorrect API key provided' } },
      {
        error: {
          status: 400,
          message: "This model's maximum context length is 128000 tokens.",
          code: 'context_length_exceeded',
        },
      },
    ]);
    const llm = fromAiSdk(modelOf(server), { stream: true });
    expect(await llm.complete(question('hi'))).toMatchObject(ok({ content: 'Whole.' }));
    expect(await llm.complete(question('hi'))).toMatchObject(err({ kind: 'auth', status: 401 }));
    expect(await llm.complete(question('hi'))).toMatchObject(err({ kind: 'context_length' }));
    expect(server.hits).toBe(5);
  });

  it('runs an agent with a tool to its answer', async () => {
    const server = await serve([{ toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] }, { content: 'It is 5.' }]);
    const result = await run(calculator(), 'What is 2 + 3?', { llm: fromAiSdk(modelOf(server)) });
    expect(result).toMatchObject({ status: 'finished', finishReason: 'answered', answer: 'It is 5.' });
    server.assertConsumed();
    expect(server.requests[1]?.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_0_0', content: '5' });
  });

  it('passes the port conformance kit, streamed and not', async () => {
    const report = await checkLlmPort({
      connect: async (script, { stream }) => {
        const server = await startOpenAiServer({ script });
        return { port: fromAiSdk(modelOf(server), { stream, vision: true }), close: () => server.close() };
      },
    });
    expect(report.failures.map((c) => `${c.name}: ${c.detail}`)).toEqual([]);
  });
});

describe('fromAiSdk over @ai-sdk/anthropic, against the local Anthropic server', () => {
  const serve = useStandIns(startAnthropicServer);
  const modelOf = (server: AnthropicServer) =>
    createAnthropic({ baseURL: `${server.baseURL}/v1`, apiKey: 'sk-ant-test' })('claude-sonnet-4-5');

  it('puts the cache mark at the end of the stable prefix, and keeps the thinking to send back', async () => {
    const server = await serve([
      {
        reasoning: [{ text: 'They want the weather.', signature: 'sig-thinking' }],
        toolCalls: [{ name: 'get_weather', arguments: { city: 'Kyoto' } }],
        usage: { inputTokens: 3_000, outputTokens: 30, cachedInputTokens: 2_000, cacheWriteTokens: 500 },
      },
      { content: 'Sunny.' },
    ]);
    const llm = fromAiSdk(modelOf(server), { stream: true });
    const history: Message[] = [{ role: 'user', content: 'Weather in Kyoto?' }];
    const first = await llm.complete(askBriefly(history, { tools: [weather], cache: { stableMessages: 2 } }));
    if (!first.isOk()) throw new Error(first.error.message);
    expect(first.value.reasoning).toEqual([{ text: 'They want the weather.', signature: 'sig-thinking' }]);
    expect(first.value.usage).toEqual({
      inputTokens: 3_000,
      outputTokens: 30,
      cachedInputTokens: 2_000,
      cacheWriteTokens: 500,
      costUsd: (500 * 3 + 2_000 * 0.3 + 500 * 3.75 + 30 * 15) / 1e6,
    });
    const body = server.requests[0];
    expect(body?.messages[0]?.content).toEqual([
      { type: 'text', text: 'Weather in Kyoto?', cache_control: { type: 'ephemeral' } },
    ]);

    const { toolCalls, reasoning } = first.value;
    await llm.complete(
      askBriefly(
        [
          ...history,
          { role: 'assistant', content: '', toolCalls, ...(reasoning ? { reasoning } : {}) },
          { role: 'tool', toolCallId: toolCalls[0]?.id ?? '', name: 'get_weather', content: 'Sunny' },
        ],
        { tools: [weather], cache: { stableMessages: 4 } },
      ),
    );
    const [, assistant, results] = server.requests[1]?.messages ?? [];
    expect(assistant?.content).toEqual([
      { type: 'thinking', thinking: 'They want the weather.', signature: 'sig-thinking' },
      { type: 'tool_use', id: toolCalls[0]?.id, name: 'get_weather', input: { city: 'Kyoto' } },
    ]);
    expect(results?.content).toEqual([
      { type: 'tool_result', tool_use_id: toolCalls[0]?.id, content: 'Sunny', cache_control: { type: 'ephemeral' } },
    ]);
    const marks = JSON.stringify(server.requests[1]).split('cache_control').length - 1;
    expect(marks).toBe(1);
  });

  it('passes the port conformance kit, streamed and not, reasoning included', async () => {
    const report = await checkLlmPort({
      connect: async (script, { stream }) => {
        const server = await startAnthropicServer({ script });
        return { port: fromAiSdk(modelOf(server), { stream, vision: true }), close: () => server.close() };
      },
      capabilities: { reasoning: true },
    });
    expect(report.failures.map((c) => `${c.name}: ${c.detail}`)).toEqual([]);
  });
});

describe('fromAiSdk over @ai-sdk/amazon-bedrock, against the local Bedrock server', () => {
  const serve = useStandIns(startBedrockServer);
  const bedrockModel = (server: BedrockServer) =>
    createAmazonBedrock({
      region: 'us-east-1',
      accessKeyId: 'AKIDTEST',
      secretAccessKey: 'secret',
      baseURL: server.endpoint,
    })('anthropic.claude-3-5-haiku-20241022-v1:0');
  const modelFor = async (script: ScriptEntry<RecordedBedrockRequest>[]) => {
    const server = await serve(script);
    return { server, model: bedrockModel(server) };
  };

  it('marks the cache point at the stable prefix, reads the cache counts and keeps the reasoning to send back', async () => {
    const { server, model } = await modelFor([
      {
        reasoning: [{ text: 'They want the weather.', signature: 'sig-bedrock' }],
        toolCalls: [{ name: 'get_weather', arguments: { city: 'Kyoto' } }],
        usage: { inputTokens: 3_000, outputTokens: 30, cachedInputTokens: 2_000, cacheWriteTokens: 500 },
      },
      { content: 'Sunny.' },
    ]);
    const llm = fromAiSdk(model, { stream: true });
    const history: Message[] = [{ role: 'user', content: 'Weather in Kyoto?' }];
    const first = await llm.complete(askBriefly(history, { tools: [weather], cache: { stableMessages: 2 } }));
    if (!first.isOk()) throw new Error(first.error.message);
    expect(first.value).toMatchObject({
      toolCalls: [{ name: 'get_weather', arguments: '{"city":"Kyoto"}' }],
      reasoning: [{ text: 'They want the weather.', signature: 'sig-bedrock' }],
      finishReason: 'tool_calls',
      // claude-3-5-haiku at Anthropic's prices: $0.80 in, $0.08 cached, $1 written, $4 out per million.
      usage: {
        inputTokens: 3_000,
        outputTokens: 30,
        cachedInputTokens: 2_000,
        cacheWriteTokens: 500,
        costUsd: (500 * 0.8 + 2_000 * 0.08 + 500 * 1 + 30 * 4) / 1e6,
      },
    });
    expect(server.requests[0]?.messages[0]?.content).toEqual([
      { text: 'Weather in Kyoto?' },
      { cachePoint: { type: 'default' } },
    ]);

    const { toolCalls, reasoning } = first.value;
    const second = await llm.complete(
      askBriefly(
        [
          ...history,
          { role: 'assistant', content: '', toolCalls, ...(reasoning ? { reasoning } : {}) },
          { role: 'tool', toolCallId: toolCalls[0]?.id ?? '', name: 'get_weather', content: 'Sunny' },
        ],
        { tools: [weather] },
      ),
    );
    expect(second).toMatchObject(ok({ content: 'Sunny.' }));
    expect(server.requests[1]?.messages[1]?.content).toEqual([
      { reasoningContent: { reasoningText: { text: 'They want the weather.', signature: 'sig-bedrock' } } },
      { toolUse: { toolUseId: toolCalls[0]?.id, name: 'get_weather', input: { city: 'Kyoto' } } },
    ]);
  });

  it('retries a throttled request and a stream cut by an exception frame; a refused key is an auth error', async () => {
    const { server, model } = await modelFor([
      {
        error: {
          status: 429,
          message: 'Too many requests, please wait before trying again.',
          type: 'ThrottlingException',
        },
      },
      { content: 'The first stream breaks.', midStreamError: { after: 2, type: 'modelStreamErrorException' } },
      { content: 'Whole.' },
      {
        error: {
          status: 403,
          message: 'The security token included in the request is invalid.',
          type: 'UnrecognizedClientException',
        },
      },
    ]);
    const llm = fromAiSdk(model, { stream: true });
    expect(await llm.complete(question('hi'))).toMatchObject(ok({ content: 'Whole.' }));
    expect(await llm.complete(question('hi'))).toMatchObject(err({ kind: 'auth', status: 403 }));
    expect(server.hits).toBe(4);
  });

  it('passes the port conformance kit, streamed and not, reasoning included', async () => {
    const report = await checkLlmPort({
      connect: async (script, { stream }) => {
        const server = await startBedrockServer({ script });
        return { port: fromAiSdk(bedrockModel(server), { stream, vision: true }), close: () => server.close() };
      },
      capabilities: { reasoning: true },
      overloaded: { status: 503, type: 'ServiceUnavailableException', message: 'Service unavailable' },
    });
    expect(report.failures.map((c) => `${c.name}: ${c.detail}`)).toEqual([]);
  });
});
