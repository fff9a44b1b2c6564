// The Bedrock port through the real `@aws-sdk/client-bedrock-runtime` against the local stand-in
// of Converse and ConverseStream (HTTP/2, AWS's event stream): what it sends, how it reads
// replies streamed or not, how it caches, counts and fails. Fake credentials: nothing reaches AWS.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../src/kernel/agent.js';
import type { Message } from '../src/kernel/messages.js';
import { defaultPolicies } from '../src/kernel/policies.js';
import { type BedrockLlmOptions, bedrockEndpoint, cachesPrompts, createBedrockLlm } from '../src/llm/bedrock.js';
import { toLlmError } from '../src/llm/bedrockErrors.js';
import type { LlmDelta } from '../src/llm/llm.js';
import { priceOf } from '../src/llm/prices.js';
import { err, ok, type Result } from '../src/result.js';
import { run } from '../src/shell/run.js';
import { type BedrockServer, type RecordedBedrockRequest, startBedrockServer } from '../src/testing/bedrockServer.js';
import { checkLlmPort } from '../src/testing/portConformance.js';
import type { ScriptEntry } from '../src/testing/script.js';
import { defineTool } from '../src/tools/defineTool.js';
import { ask, clock, PIXEL, weather } from './portFixtures.js';
import { useStandIns } from './servers.js';

const serve = useStandIns(startBedrockServer);

const MODEL = 'us.anthropic.claude-3-7-sonnet-20250219-v1:0';
const credentials = { accessKeyId: 'AKIDLOCALTEST', secretAccessKey: 'local-secret' };

const llmFor = (server: BedrockServer, extra: Partial<BedrockLlmOptions> = {}) =>
  createBedrockLlm({
    model: MODEL,
    region: 'us-west-2',
    endpoint: server.endpoint,
    credentials,
    maxRetries: 0,
    ...extra,
  });

const twoCalls = [
  { id: 'tooluse_weather', name: 'get_weather', arguments: '{"city":"Oslo"}' },
  { id: 'tooluse_time', name: 'get_time', arguments: '{"city":"Lima"}' },
];
/** A reply that called two tools and both results, as the next request carries them. */
const afterTwoCalls: Message[] = [
  { role: 'system', content: 'You look things up.' },
  { role: 'user', content: 'Weather in Oslo and time in Lima?' },
  { role: 'assistant', content: 'Looking both up.', toolCalls: twoCalls },
  { role: 'tool', toolCallId: 'tooluse_weather', name: 'get_weather', content: 'Cold, -3 °C' },
  { role: 'tool', toolCallId: 'tooluse_time', name: 'get_time', content: '12:00' },
];

const unwrap = <T>(result: Result<T, { kind: string; message: string }>): T => {
  if (result.isErr()) throw new Error(`${result.error.kind}: ${result.error.message}`);
  return result.value;
};

describe('the Bedrock port', () => {
  it('sends the system prompt as system blocks, the model in the path and the model settings, and reads the reply', async () => {
    const server = await serve([{ content: 'Hello there.', usage: { inputTokens: 20, outputTokens: 3 } }]);
    const result = await llmFor(server, { maxTokens: 512, temperature: 0.2 }).complete(
      ask([
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Hi' },
      ]),
    );
    expect(result).toEqual(
      ok({
        content: 'Hello there.',
        toolCalls: [],
        finishReason: 'stop',
        // Claude 3.7 Sonnet at Anthropic's price: 20 × $3 + 3 × $15 per million.
        usage: { inputTokens: 20, outputTokens: 3, costUsd: 0.000105 },
      }),
    );
    const [body] = server.requests;
    expect(body).toEqual({
      modelId: MODEL,
      stream: false,
      system: [{ text: 'You are terse.' }],
      messages: [{ role: 'user', content: [{ text: 'Hi' }] }],
      inferenceConfig: { maxTokens: 512, temperature: 0.2 },
    });
    expect(server.paths).toEqual([`/model/${encodeURIComponent(MODEL)}/converse`]);
    server.assertConsumed();
  });

  it('reads every tool call of a reply, and answers each with a toolResult of its own id', async () => {
    const server = await serve([
      {
        content: 'Looking both up.',
        toolCalls: [
          { id: 'tooluse_weather', name: 'get_weather', arguments: { city: 'Oslo' } },
          { id: 'tooluse_time', name: 'get_time', arguments: { city: 'Lima' } },
        ],
      },
      { content: 'Oslo is cold; it is noon in Lima.' },
    ]);
    const llm = llmFor(server);
    const first = unwrap(await llm.complete(ask(afterTwoCalls.slice(0, 2), { tools: [weather, clock] })));
    expect(first).toMatchObject({ content: 'Looking both up.', toolCalls: twoCalls, finishReason: 'tool_calls' });

    const second = unwrap(await llm.complete(ask(afterTwoCalls, { tools: [weather, clock] })));
    expect(second.content).toBe('Oslo is cold; it is noon in Lima.');
    const sent = server.requests[1];
    expect(sent?.messages).toEqual([
      { role: 'user', content: [{ text: 'Weather in Oslo and time in Lima?' }] },
      {
        role: 'assistant',
        content: [
          { text: 'Looking both up.' },
          { toolUse: { toolUseId: 'tooluse_weather', name: 'get_weather', input: { city: 'Oslo' } } },
          { toolUse: { toolUseId: 'tooluse_time', name: 'get_time', input: { city: 'Lima' } } },
        ],
      },
      {
        role: 'user',
        content: [
          { toolResult: { toolUseId: 'tooluse_weather', content: [{ text: 'Cold, -3 °C' }] } },
          { toolResult: { toolUseId: 'tooluse_time', content: [{ text: '12:00' }] } },
        ],
      },
    ]);
    expect(sent?.toolConfig).toEqual({
      tools: [
        {
          toolSpec: {
            name: 'get_weather',
            description: 'The weather in a city.',
            inputSchema: { json: weather.parameters },
          },
        },
        {
          toolSpec: {
            name: 'get_time',
            description: 'The local time in a city.',
            inputSchema: { json: clock.parameters },
          },
        },
      ],
      toolChoice: { auto: {} },
    });
    server.assertConsumed();
  });

  it('maps the tool choice: required is any, none sends no tools — unless the history holds tool blocks', async () => {
    const server = await serve([{ content: 'a' }, { content: 'b' }, { content: 'c' }, { content: 'd' }]);
    const llm = llmFor(server);
    const question: Message[] = [{ role: 'user', content: 'Weather?' }];
    unwrap(await llm.complete(ask(question, { tools: [weather], toolChoice: 'required' })));
    unwrap(await llm.complete(ask(question, { tools: [weather], toolChoice: 'none' })));
    unwrap(await llm.complete(ask(afterTwoCalls, { tools: [weather, clock], toolChoice: 'none' })));
    // Calls to tools the request no longer gives: their names are listed, as Converse wants.
    unwrap(await llm.complete(ask(afterTwoCalls, { tools: [], toolChoice: 'none' })));
    const [required, none, noneAfterCalls, gone] = server.requests;
    expect(required?.toolConfig?.toolChoice).toEqual({ any: {} });
    expect(none?.toolConfig).toBeUndefined();
    expect(noneAfterCalls?.toolConfig?.tools).toHaveLength(2);
    expect(noneAfterCalls?.toolConfig?.toolChoice).toBeUndefined();
    expect(gone?.toolConfig?.tools.map((t) => (t.toolSpec as { name: string }).name)).toEqual([
      'get_weather',
      'get_time',
    ]);
  });

  it('sends arguments that are not a JSON object as {} and leaves out blank texts, which Converse refuses', async () => {
    const server = await serve([{ content: 'Fine.' }]);
    const history: Message[] = [
      { role: 'user', content: 'Go' },
      { role: 'assistant', content: '', toolCalls: [{ id: 't1', name: 'get_weather', arguments: '{"city": "Os' }] },
      { role: 'tool', toolCallId: 't1', name: 'get_weather', content: '' },
      { role: 'user', content: '   ' },
      { role: 'system', content: 'Be brief.' },
    ];
    unwrap(await llmFor(server).complete(ask(history, { tools: [weather] })));
    expect(server.requests[0]?.messages).toEqual([
      { role: 'user', content: [{ text: 'Go' }] },
      { role: 'assistant', content: [{ toolUse: { toolUseId: 't1', name: 'get_weather', input: {} } }] },
      {
        role: 'user',
        // A later system message has no place in Converse: it is said where it was, as the user's.
        content: [{ toolResult: { toolUseId: 't1', content: [{ text: '(no output)' }] } }, { text: 'Be brief.' }],
      },
    ]);
  });

  it('streams text and tool-call pieces as deltas, and answers as a whole reply would', async () => {
    const reply = {
      content: 'Let me look that up for you, one moment.',
      toolCalls: [
        { id: 'tooluse_a', name: 'get_weather', arguments: { city: 'Reykjavík, Iceland' } },
        { id: 'tooluse_b', name: 'get_time', arguments: { city: 'Lima' } },
      ],
      usage: { inputTokens: 40, outputTokens: 25 },
    };
    const server = await serve([reply, reply]);
    const deltas: LlmDelta[] = [];
    const request = ask([{ role: 'user', content: 'Both?' }], { tools: [weather, clock] });
    const streamed = unwrap(
      await llmFor(server, { stream: true }).complete(request, { onDelta: (d) => deltas.push(d) }),
    );
    const whole = unwrap(await llmFor(server).complete(request));
    expect(streamed).toEqual(whole);
    expect(server.paths.map((p) => p.split('/').pop())).toEqual(['converse-stream', 'converse']);
    expect(server.requests[0]?.stream).toBe(true);

    const text = deltas.flatMap((d) => (d.text ? [d.text] : []));
    expect(text.length).toBeGreaterThan(1);
    expect(text.join('')).toBe(reply.content);
    const calls = deltas.flatMap((d) => (d.toolCall ? [d.toolCall] : []));
    expect(calls.filter((c) => c.id)).toEqual([
      { index: 0, id: 'tooluse_a', name: 'get_weather' },
      { index: 1, id: 'tooluse_b', name: 'get_time' },
    ]);
    for (const [index, call] of streamed.toolCalls.entries()) {
      const pieces = calls.filter((c) => c.index === index && c.arguments);
      expect(pieces.map((c) => c.arguments).join('')).toBe(call.arguments);
    }
    expect(calls.filter((c) => c.index === 0 && c.arguments).length).toBeGreaterThan(1);
  });

  it('counts cache reads and writes in the input, as Bedrock reports them apart, and prices them', async () => {
    const usage = { inputTokens: 12_000, outputTokens: 500, cachedInputTokens: 9_000, cacheWriteTokens: 1_000 };
    const server = await serve([
      { content: 'ok', usage },
      { content: 'ok', usage },
    ]);
    const question = ask([{ role: 'user', content: 'Hi' }]);
    const whole = unwrap(await llmFor(server).complete(question));
    const streamed = unwrap(await llmFor(server, { stream: true }).complete(question));
    // 2,000 fresh × $3, 9,000 read × $0.30, 1,000 written × $3.75, 500 out × $15, per million.
    const counted = { ...usage, costUsd: 0.01995 };
    expect(whole.usage).toEqual(counted);
    expect(streamed.usage).toEqual(counted);
  });

  it('puts cache points after the system prompt and after the stable prefix, for the models that cache', async () => {
    const server = await serve(Array.from({ length: 4 }, () => ({ content: 'ok' })));
    // The next-step prompt after the tool results is not part of the stable prefix.
    const request = ask([...afterTwoCalls, { role: 'user', content: 'What next?' }], {
      tools: [weather, clock],
      cache: { key: 'run-1', stableMessages: afterTwoCalls.length },
    });
    unwrap(await llmFor(server).complete(request));
    unwrap(await llmFor(server, { promptCache: false }).complete(request));
    unwrap(await llmFor(server, { model: 'meta.llama3-3-70b-instruct-v1:0' }).complete(request));
    unwrap(await llmFor(server, { model: 'amazon.nova-pro-v1:0' }).complete(request));
    const [claude, off, llama, nova] = server.requests;
    const point = { cachePoint: { type: 'default' } };
    expect(claude?.system).toEqual([{ text: 'You look things up.' }, point]);
    expect(claude?.messages[2]?.content).toEqual([
      { toolResult: { toolUseId: 'tooluse_weather', content: [{ text: 'Cold, -3 °C' }] } },
      { toolResult: { toolUseId: 'tooluse_time', content: [{ text: '12:00' }] } },
      point,
      { text: 'What next?' },
    ]);
    expect(JSON.stringify(claude?.messages).match(/cachePoint/g)).toHaveLength(1);
    for (const uncached of [off, llama]) expect(JSON.stringify(uncached)).not.toContain('cachePoint');
    expect(nova?.system).toEqual(claude?.system);
    expect(nova?.messages).toEqual(claude?.messages);
  });

  it('caches Claude from 3.5 Haiku and 3.7 Sonnet on, and Nova, by default', () => {
    expect(cachesPrompts('anthropic.claude-3-7-sonnet-20250219-v1:0')).toBe(true);
    expect(cachesPrompts('eu.anthropic.claude-sonnet-4-5-20250929-v1:0')).toBe(true);
    expect(cachesPrompts('anthropic.claude-3-5-haiku-20241022-v1:0')).toBe(true);
    expect(cachesPrompts('us.amazon.nova-lite-v1:0')).toBe(true);
    expect(cachesPrompts('anthropic.claude-3-haiku-20240307-v1:0')).toBe(false);
    expect(cachesPrompts('anthropic.claude-3-5-sonnet-20241022-v2:0')).toBe(false);
    expect(cachesPrompts('meta.llama3-3-70b-instruct-v1:0')).toBe(false);
  });

  it("sends the model's own fields, and with Claude's thinking neither a forced tool call nor a temperature", async () => {
    const server = await serve([{ content: 'a' }]);
    const thinking = { thinking: { type: 'enabled', budget_tokens: 1024 } };
    const llm = llmFor(server, { maxTokens: 4096, temperature: 0.2, additionalModelRequestFields: thinking });
    unwrap(
      await llm.complete(ask([{ role: 'user', content: 'Weather?' }], { tools: [weather], toolChoice: 'required' })),
    );
    const [sent] = server.requests;
    expect(sent?.additionalModelRequestFields).toEqual(thinking);
    expect(sent?.inferenceConfig).toEqual({ maxTokens: 4096 });
    expect(sent?.toolConfig?.toolChoice).toEqual({ auto: {} });
  });

  it('keeps the reasoning of a reply, signed or redacted, and sends it back first in its turn', async () => {
    const reasoning = [
      { text: 'The user wants the weather; Oslo first.', signature: 'sig-abc' },
      { text: '', redacted: Buffer.from('opaque bytes').toString('base64') },
    ];
    const reply = {
      content: 'Checking.',
      reasoning,
      toolCalls: [{ id: 'tooluse_1', name: 'get_weather', arguments: { city: 'Oslo' } }],
    };
    const server = await serve([reply, reply, { content: 'Cold.' }]);
    const question: Message[] = [{ role: 'user', content: 'Weather in Oslo?' }];
    const whole = unwrap(await llmFor(server).complete(ask(question, { tools: [weather] })));
    const streamed = unwrap(await llmFor(server, { stream: true }).complete(ask(question, { tools: [weather] })));
    expect(whole.reasoning).toEqual(reasoning);
    expect(streamed.reasoning).toEqual(reasoning);

    const history: Message[] = [
      ...question,
      { role: 'assistant', content: whole.content, toolCalls: whole.toolCalls, reasoning: whole.reasoning ?? [] },
      { role: 'tool', toolCallId: 'tooluse_1', name: 'get_weather', content: 'Cold' },
    ];
    unwrap(await llmFor(server).complete(ask(history, { tools: [weather] })));
    expect(server.requests[2]?.messages[1]?.content).toEqual([
      {
        reasoningContent: { reasoningText: { text: 'The user wants the weather; Oslo first.', signature: 'sig-abc' } },
      },
      { reasoningContent: { redactedContent: reasoning[1]?.redacted } },
      { text: 'Checking.' },
      { toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { city: 'Oslo' } } },
    ]);
  });

  it('sends images of user and tool messages as image blocks with vision, and none without', async () => {
    const server = await serve([{ content: 'A pixel.' }, { content: 'A pixel.' }, { content: 'A pixel.' }]);
    const history: Message[] = [
      { role: 'user', content: 'What is this?', image: PIXEL },
      { role: 'assistant', content: '', toolCalls: [{ id: 'shot', name: 'screenshot', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'shot', name: 'screenshot', content: 'Took a screenshot.', image: PIXEL },
    ];
    const request = ask(history, {
      tools: [{ name: 'screenshot', description: 'Shoot', parameters: { type: 'object' } }],
    });
    unwrap(await llmFor(server, { vision: true }).complete(request));
    unwrap(await llmFor(server).complete(request));
    unwrap(
      await llmFor(server, { vision: true }).complete(
        ask([{ role: 'user', content: 'And this?', image: { ...PIXEL, mimeType: 'image/tiff' } }]),
      ),
    );
    const [seen, blind, tiff] = server.requests;
    const block = { image: { format: 'png', source: { bytes: PIXEL.base64 } } };
    expect(seen?.messages[0]?.content).toEqual([{ text: 'What is this?' }, block]);
    expect(seen?.messages[2]?.content).toEqual([
      { toolResult: { toolUseId: 'shot', content: [{ text: 'Took a screenshot.' }, block] } },
    ]);
    expect(JSON.stringify(blind)).not.toContain('"image"');
    expect(tiff?.messages[0]?.content).toEqual([
      { text: 'And this?' },
      { text: '(an image of type image/tiff, which Bedrock does not take, was left out)' },
    ]);
  });

  it('in the prompt tool mode describes the tools in the system prompt and reads calls from the text', async () => {
    const server = await serve([
      { content: 'On it.\n<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>' },
      { content: 'Cold in Oslo.' },
    ]);
    const llm = llmFor(server, { toolMode: 'prompt', stream: true });
    const first = unwrap(await llm.complete(ask([{ role: 'user', content: 'Weather?' }], { tools: [weather] })));
    expect(first).toMatchObject({
      content: 'On it.',
      toolCalls: [{ name: 'get_weather', arguments: '{"city":"Oslo"}' }],
      finishReason: 'tool_calls',
    });
    const [call] = first.toolCalls;
    if (!call) throw new Error('no call');
    const history: Message[] = [
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: first.content, toolCalls: first.toolCalls },
      { role: 'tool', toolCallId: call.id, name: call.name, content: 'Cold' },
    ];
    unwrap(await llm.complete(ask(history, { tools: [weather] })));
    const [sent, next] = server.requests;
    expect(sent?.toolConfig).toBeUndefined();
    expect(JSON.stringify(sent?.system)).toContain('get_weather');
    expect(JSON.stringify(next)).not.toContain('toolUse');
    expect(next?.messages[2]?.content).toEqual([{ text: '<tool_result name="get_weather">\nCold\n</tool_result>' }]);
  });

  it('says a reply cut at the output limit ended for its length', async () => {
    const server = await serve([
      { content: 'This answer was cut at the', finishReason: 'length' },
      { content: 'This answer was cut at the', finishReason: 'length' },
    ]);
    expect(unwrap(await llmFor(server).complete(ask([{ role: 'user', content: 'Long' }]))).finishReason).toBe('length');
    const streamed = await llmFor(server, { stream: true }).complete(ask([{ role: 'user', content: 'Long' }]));
    expect(unwrap(streamed).finishReason).toBe('length');
  });
});

describe('the Bedrock port failing', () => {
  const question = ask([{ role: 'user', content: 'Hi' }]);

  it('has the SDK retry a throttled request, then answers', async () => {
    const server = await serve([
      {
        error: {
          status: 429,
          type: 'ThrottlingException',
          message: 'Too many requests, please wait before trying again.',
        },
      },
      { content: 'ok after waiting' },
    ]);
    expect(unwrap(await llmFor(server, { maxRetries: 2 }).complete(question)).content).toBe('ok after waiting');
    expect(server.hits).toBe(2);
  });

  it('reads each AWS exception as its kind', async () => {
    const cases: [ScriptEntry<RecordedBedrockRequest>, string, number | undefined][] = [
      [{ error: { status: 429, message: 'Too many requests, please wait before trying again.' } }, 'rate_limit', 429],
      [{ error: { status: 503, message: 'Bedrock is unable to process your request.' } }, 'overloaded', 503],
      [
        { error: { status: 429, type: 'ModelNotReadyException', message: 'The model is not ready.' } },
        'overloaded',
        429,
      ],
      [
        { error: { status: 403, message: "You don't have access to the model with the specified model ID." } },
        'auth',
        403,
      ],
      [
        {
          error: {
            status: 403,
            type: 'UnrecognizedClientException',
            message: 'The security token included in the request is invalid.',
          },
        },
        'auth',
        403,
      ],
      [
        {
          error: {
            status: 403,
            type: 'ExpiredTokenException',
            message: 'The security token included in the request is expired',
          },
        },
        'auth',
        403,
      ],
      [{ error: { status: 400, message: 'Input is too long for requested model.' } }, 'context_length', 400],
      [{ error: { status: 400, message: 'The provided model identifier is invalid.' } }, 'bad_request', 400],
      [{ error: { status: 404, message: 'Model not found.' } }, 'bad_request', 404],
      [{ error: { status: 500, message: 'The server encountered an internal error.' } }, 'server', 500],
      [{ error: { status: 424, message: 'The model returned an error.' } }, 'server', 424],
      [{ error: { status: 408, message: 'The request took too long to process.' } }, 'timeout', 408],
    ];
    for (const [failure, kind, status] of cases) {
      const server = await serve([failure]);
      const result = await llmFor(server).complete(question);
      expect(result.isOk() ? 'a reply' : [result.error.kind, result.error.status], JSON.stringify(failure)).toEqual([
        kind,
        status,
      ]);
      if (!result.isOk()) expect(result.error.message).toMatch(/Exception: /);
    }
  });

  it('retries a stream cut mid-way, and the deltas restart', async () => {
    const server = await serve([
      { content: 'A first attempt that breaks off half way through.', cutAfter: 3 },
      { content: 'The whole second attempt.' },
    ]);
    const deltas: LlmDelta[] = [];
    const reply = unwrap(
      await llmFor(server, { stream: true, maxRetries: 1 }).complete(question, { onDelta: (d) => deltas.push(d) }),
    );
    expect(reply.content).toBe('The whole second attempt.');
    const restart = deltas.findIndex((d) => d.restart);
    expect(restart).toBeGreaterThan(0);
    expect(
      deltas
        .slice(0, restart)
        .map((d) => d.text)
        .join(''),
    ).not.toBe('');
    expect(
      deltas
        .slice(restart + 1)
        .map((d) => d.text ?? '')
        .join(''),
    ).toBe('The whole second attempt.');
  });

  it('retries a stream that ends before its messageStop, or in the middle of a frame', async () => {
    const server = await serve([{ content: 'Ends early.', endAfter: 3 }, { content: 'Whole.' }]);
    expect(unwrap(await llmFor(server, { stream: true, maxRetries: 1 }).complete(question)).content).toBe('Whole.');
    const cut = await serve([{ content: 'Ends early.', endAfter: 2 }]);
    const result = await llmFor(cut, { stream: true }).complete(question);
    expect(result.isOk() ? 'a reply' : result.error.kind).toBe('network');
  });

  it('retries a reply whose exception frame says the model stream failed or was throttled', async () => {
    const server = await serve([
      { content: 'Half of it', midStreamError: { after: 2, message: 'The model stream failed.' } },
      { content: 'Second try', midStreamError: { after: 3, type: 'ThrottlingException', message: 'Slow down' } },
      { content: 'Third time lucky.' },
    ]);
    const deltas: LlmDelta[] = [];
    const llm = llmFor(server, { stream: true, maxRetries: 2 });
    expect(unwrap(await llm.complete(question, { onDelta: (d) => deltas.push(d) })).content).toBe('Third time lucky.');
    expect(deltas.filter((d) => d.restart)).toHaveLength(2);
    server.assertConsumed();

    const failing = await serve([
      { content: 'Half of it', midStreamError: { after: 2, type: 'ThrottlingException', message: 'Slow down' } },
    ]);
    const result = await llmFor(failing, { stream: true }).complete(question);
    expect(result.isOk() ? 'a reply' : [result.error.kind, result.error.message]).toEqual([
      'rate_limit',
      'ThrottlingException: Slow down',
    ]);
  });

  it('does not retry a validation exception in the stream', async () => {
    const server = await serve([
      { content: 'Half', midStreamError: { after: 2, type: 'ValidationException', message: 'Bad input' } },
      { content: 'never' },
    ]);
    const result = await llmFor(server, { stream: true, maxRetries: 2 }).complete(question);
    expect(result.isOk() ? 'a reply' : result.error.kind).toBe('bad_request');
    expect(server.hits).toBe(1);
  });

  it('retries a whole reply cut short, and a connection cut before the reply', async () => {
    const server = await serve([
      { content: 'A reply cut short mid-body.', cutAfter: 2 },
      { error: {} },
      { content: 'Whole.' },
    ]);
    expect(unwrap(await llmFor(server, { maxRetries: 2 }).complete(question)).content).toBe('Whole.');
    server.assertConsumed();
  });

  it('ends a request as aborted, and one that hears nothing as timed out', async () => {
    const server = await serve([
      { content: 'never', stallAfter: 2 },
      { content: 'never', stallAfter: 2 },
    ]);
    const controller = new AbortController();
    const pending = llmFor(server, { stream: true }).complete(question, {
      signal: controller.signal,
      onDelta: () => controller.abort(),
    });
    expect(await pending).toEqual(err({ kind: 'aborted', message: 'the request was aborted' }));
    const idle = await llmFor(server, { stream: true, idleTimeoutMs: 100 }).complete(question);
    expect(idle.isOk() ? 'a reply' : idle.error).toEqual({
      kind: 'timeout',
      message: 'the reply stream went quiet for 100 ms',
    });
  });

  it('says a refused connection is a network error', async () => {
    const server = await serve([]);
    const { endpoint } = server;
    await server.close();
    const result = await createBedrockLlm({
      model: MODEL,
      region: 'us-west-2',
      endpoint,
      credentials,
      maxRetries: 0,
    }).complete(question);
    expect(result.isOk() ? 'a reply' : result.error.kind).toBe('network');
  });

  it('says what is missing when the SDK finds no credentials or no region', () => {
    const noCredentials = Object.assign(new Error('Could not load credentials from any providers'), {
      name: 'CredentialsProviderError',
    });
    expect(toLlmError(noCredentials)).toEqual({
      kind: 'config',
      message: expect.stringMatching(
        /^no AWS credentials \(Could not load credentials from any providers\): give `credentials`/,
      ),
    });
    expect(toLlmError(new Error('Region is missing'))).toEqual({
      kind: 'config',
      message: expect.stringMatching(/^no AWS region: give `region`, an endpoint that names one/),
    });
  });

  it('refuses bad options at once', () => {
    expect(() => createBedrockLlm({ model: '' })).toThrow(/model must name/);
    expect(() => createBedrockLlm({ model: MODEL, maxRetries: -1 })).toThrow(RangeError);
    expect(() => createBedrockLlm({ model: MODEL, endpoint: 'ftp://bedrock' })).toThrow(/endpoint must be a host/);
    expect(() => createBedrockLlm({ model: MODEL, endpoint: 'http://' })).toThrow(/endpoint must be a host/);
  });
});

describe('the Bedrock endpoint', () => {
  it("takes OpenManus's bare host as https and the region from it", () => {
    expect(bedrockEndpoint('bedrock-runtime.us-west-2.amazonaws.com')).toEqual({
      url: 'https://bedrock-runtime.us-west-2.amazonaws.com',
      region: 'us-west-2',
    });
    expect(bedrockEndpoint('https://bedrock-runtime-fips.us-gov-west-1.amazonaws.com/')).toEqual({
      url: 'https://bedrock-runtime-fips.us-gov-west-1.amazonaws.com',
      region: 'us-gov-west-1',
    });
    expect(bedrockEndpoint('https://vpce-0abc-1de.bedrock-runtime.eu-central-1.vpce.amazonaws.com')).toMatchObject({
      region: 'eu-central-1',
    });
    expect(bedrockEndpoint('http://127.0.0.1:4566/proxy')).toEqual({ url: 'http://127.0.0.1:4566/proxy' });
  });
});

describe('Bedrock model ids in the price table', () => {
  it("price Claude at Anthropic's price, by its model, profile and version", () => {
    expect(priceOf('anthropic.claude-3-7-sonnet-20250219-v1:0')).toBe(priceOf('claude-3-7-sonnet'));
    expect(priceOf('us.anthropic.claude-3-7-sonnet-20250219-v1:0')).toBe(priceOf('claude-3-7-sonnet'));
    expect(priceOf('eu.anthropic.claude-3-5-sonnet-20241022-v2:0')).toBe(priceOf('claude-3-5-sonnet'));
    expect(priceOf('apac.anthropic.claude-sonnet-4-20250514-v1:0')).toBe(priceOf('claude-sonnet-4'));
    expect(priceOf('global.anthropic.claude-sonnet-4-5-20250929-v1:0')).toBe(priceOf('claude-sonnet-4-5'));
    expect(priceOf('anthropic.claude-3-haiku-20240307-v1:0')).toBe(priceOf('claude-3-haiku'));
  });

  it('leave unknown what Bedrock prices otherwise: regional profiles of Claude from Sonnet 4.5 on, other vendors, variants', () => {
    for (const model of [
      'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
      'anthropic.claude-haiku-4-5-20251001-v1:0',
      'eu.anthropic.claude-opus-4-5-20251101-v1:0',
      'us-gov.anthropic.claude-3-7-sonnet-20250219-v1:0',
      'anthropic.claude-3-haiku-20240307-v1:0:200k',
      'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123',
      'amazon.nova-pro-v1:0',
      'meta.llama3-3-70b-instruct-v1:0',
      'anthropic.claude-unknown-20250101-v1:0',
    ]) {
      expect(priceOf(model), model).toBeUndefined();
    }
  });

  it("apply a host's price for the Anthropic name to the Bedrock id as well", () => {
    const mine = { input: 1, output: 2 };
    expect(priceOf('us.anthropic.claude-3-7-sonnet-20250219-v1:0', { 'claude-3-7-sonnet': mine })).toBe(mine);
    const exact = { input: 3.3, output: 16.5 };
    const id = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
    expect(priceOf(id, { [id]: exact })).toBe(exact);
  });
});

describe('the Bedrock stand-in', () => {
  it('refuses, as Bedrock does, a conversation that does not alternate or leaves a call unanswered', async () => {
    const server = await serve([{ content: 'x' }, { content: 'x' }, { content: 'x' }]);
    const { BedrockRuntimeClient, ConverseCommand } = await import('@aws-sdk/client-bedrock-runtime');
    const client = new BedrockRuntimeClient({
      region: 'us-west-2',
      endpoint: server.endpoint,
      credentials,
      maxAttempts: 1,
    });
    const send = (input: Omit<ConstructorParameters<typeof ConverseCommand>[0], 'modelId'>) =>
      client.send(new ConverseCommand({ modelId: MODEL, ...input })).then(
        () => 'accepted',
        (error: Error) => `${error.name}: ${error.message}`,
      );
    expect(
      await send({
        messages: [
          { role: 'user', content: [{ text: 'a' }] },
          { role: 'user', content: [{ text: 'b' }] },
        ],
      }),
    ).toMatch(/^ValidationException: A conversation must alternate/);
    expect(
      await send({
        messages: [
          { role: 'user', content: [{ text: 'a' }] },
          { role: 'assistant', content: [{ toolUse: { toolUseId: 't1', name: 'f', input: {} } }] },
          { role: 'user', content: [{ text: 'no result' }] },
        ],
        toolConfig: { tools: [{ toolSpec: { name: 'f', inputSchema: { json: { type: 'object' } } } }] },
      }),
    ).toBe('ValidationException: Expected toolResult blocks at messages.2.content for the following Ids: t1');
    expect(
      await send({
        messages: [
          { role: 'user', content: [{ text: 'a' }] },
          { role: 'assistant', content: [{ toolUse: { toolUseId: 't1', name: 'f', input: {} } }] },
          { role: 'user', content: [{ toolResult: { toolUseId: 't1', content: [{ text: 'r' }] } }] },
        ],
      }),
    ).toMatch(/^ValidationException: The toolConfig field must be defined/);
    client.destroy();
  });
});

describe('the Bedrock stand-in over HTTP/1.1', () => {
  it('answers clients that speak HTTP/1.1 (fetch) on the same port', async () => {
    const server = await serve([{ content: 'Hello over HTTP/1.1.' }, { content: 'Streamed too.' }]);
    const body = JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'Hi' }] }] });
    const post = (operation: string) =>
      fetch(`${server.endpoint}/model/${encodeURIComponent(MODEL)}/${operation}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
    const whole = await post('converse');
    expect(await whole.json()).toMatchObject({
      output: { message: { role: 'assistant', content: [{ text: 'Hello over HTTP/1.1.' }] } },
      stopReason: 'end_turn',
    });
    const streamed = await post('converse-stream');
    expect(streamed.headers.get('content-type')).toBe('application/vnd.amazon.eventstream');
    expect(Buffer.from(await streamed.arrayBuffer()).toString('latin1')).toContain('Streamed too.');
    expect(server.requests.map((r) => [r.modelId, r.stream])).toEqual([
      [MODEL, false],
      [MODEL, true],
    ]);
  });
});

describe('an agent on Bedrock', () => {
  it('runs a task with a tool to its end, streamed', async () => {
    const lookups: string[] = [];
    const getWeather = defineTool({
      name: 'get_weather',
      description: 'The weather in a city.',
      parameters: z.object({ city: z.string() }),
      execute: async ({ city }) => {
        lookups.push(city);
        return `${city}: sunny, 21 °C`;
      },
    });
    const server = await serve([
      {
        content: 'Checking both.',
        toolCalls: [
          { id: 'tooluse_kyoto', name: 'get_weather', arguments: { city: 'Kyoto' } },
          { id: 'tooluse_osaka', name: 'get_weather', arguments: { city: 'Osaka' } },
        ],
        usage: { inputTokens: 300, outputTokens: 40, cachedInputTokens: 0, cacheWriteTokens: 250 },
      },
      {
        content: 'Sunny in both Kyoto and Osaka.',
        usage: { inputTokens: 400, outputTokens: 10, cachedInputTokens: 250 },
      },
    ]);
    const agent = createAgent({
      name: 'forecaster',
      systemPrompt: 'You report the weather.',
      tools: [getWeather],
      policies: defaultPolicies({ maxSteps: 5 }),
    });
    const result = await run(agent, 'Weather in Kyoto and Osaka?', { llm: llmFor(server, { stream: true }) });
    expect(result.answer).toBe('Sunny in both Kyoto and Osaka.');
    expect(lookups.sort()).toEqual(['Kyoto', 'Osaka']);
    expect(result.usage).toMatchObject({ inputTokens: 700, outputTokens: 50, cachedInputTokens: 250, llmCalls: 2 });
    expect(result.usage.costUsd).toBeGreaterThan(0);
    const results = server.requests[1]?.messages
      .at(-1)
      ?.content.flatMap((b) => ('toolResult' in b ? [b.toolResult] : []));
    expect(results).toMatchObject([
      { toolUseId: 'tooluse_kyoto', content: [{ text: expect.stringContaining('Kyoto: sunny') }] },
      { toolUseId: 'tooluse_osaka', content: [{ text: expect.stringContaining('Osaka: sunny') }] },
    ]);
    // The second request caches up to the tool results, the stable prefix.
    expect(JSON.stringify(server.requests[1]?.system)).toContain('cachePoint');
    server.assertConsumed();
  });
});

describe('the Bedrock port conformance', () => {
  it('passes the port conformance kit, streamed and not, reasoning included', async () => {
    const report = await checkLlmPort({
      connect: async (script, { stream }) => {
        const server = await startBedrockServer({ script });
        const port = createBedrockLlm({
          model: MODEL,
          region: 'us-west-2',
          endpoint: server.endpoint,
          credentials,
          stream,
          maxRetries: 3,
          vision: true,
        });
        return { port, close: () => server.close() };
      },
      capabilities: { reasoning: true },
      overloaded: { status: 503, type: 'ServiceUnavailableException', message: 'Service unavailable' },
    });
    expect(report.failures.map((c) => `${c.name}: ${c.detail}`)).toEqual([]);
    expect(report.checks.filter((c) => c.status === 'not applicable')).toEqual([]);
  });
});
