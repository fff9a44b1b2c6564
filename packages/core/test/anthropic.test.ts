// The Anthropic port through the real `@anthropic-ai/sdk` against the local stand-in of the
// Messages API: what it sends, how it reads replies streamed or not, and how it fails.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../src/kernel/agent.js';
import type { Message } from '../src/kernel/messages.js';
import { defaultPolicies } from '../src/kernel/policies.js';
import { type AnthropicLlmOptions, createAnthropicLlm } from '../src/llm/anthropic.js';
import type { LlmDelta } from '../src/llm/llm.js';
import { err, ok } from '../src/result.js';
import { run } from '../src/shell/run.js';
import {
  type AnthropicServer,
  type RecordedAnthropicRequest,
  startAnthropicServer,
} from '../src/testing/anthropicServer.js';
import { checkLlmPort } from '../src/testing/portConformance.js';
import { defineTool } from '../src/tools/defineTool.js';
import { add, ask, clock, PIXEL, weather } from './portFixtures.js';
import { useStandIns } from './servers.js';

const serve = useStandIns(startAnthropicServer);

const llmFor = (server: AnthropicServer, extra: Partial<AnthropicLlmOptions> = {}) =>
  createAnthropicLlm({
    model: 'claude-sonnet-4-5',
    apiKey: 'sk-ant-test',
    baseURL: server.baseURL,
    maxRetries: 0,
    ...extra,
  });

const blocksOf = (request: RecordedAnthropicRequest | undefined, turn: number) =>
  request?.messages[turn]?.content as Record<string, unknown>[];

describe('the Anthropic port', () => {
  it('sends the system prompt as `system`, the model and a max_tokens, and reads the text reply', async () => {
    const server = await serve([{ content: 'Hello there.', usage: { inputTokens: 20, outputTokens: 3 } }]);
    const result = await llmFor(server).complete(
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
        usage: { inputTokens: 20, outputTokens: 3, cachedInputTokens: 0, cacheWriteTokens: 0, costUsd: 0.000105 },
      }),
    );
    const [body] = server.requests;
    expect(body).toMatchObject({
      model: 'claude-sonnet-4-5',
      max_tokens: 8192,
      system: [{ type: 'text', text: 'You are terse.' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
    });
    expect(body?.tools).toBeUndefined();
    expect(body?.stream).toBeUndefined();
    expect(server.paths).toEqual(['/v1/messages']);
    server.assertConsumed();
  });

  it('reads parallel tool calls, each with its id, and sends their results back as one user turn with those ids', async () => {
    const server = await serve([
      {
        content: 'Looking both up.',
        toolCalls: [
          { id: 'toolu_weather', name: 'get_weather', arguments: { city: 'Oslo' } },
          { id: 'toolu_time', name: 'get_time', arguments: { city: 'Lima' } },
        ],
      },
      { content: 'Oslo is cold; it is noon in Lima.' },
    ]);
    const llm = llmFor(server);
    const history: Message[] = [
      { role: 'system', content: 'You look things up.' },
      { role: 'user', content: 'Weather in Oslo and time in Lima?' },
    ];
    const first = await llm.complete(ask(history, { tools: [weather, clock] }));
    if (!first.isOk()) throw new Error(first.error.message);
    expect(first.value.finishReason).toBe('tool_calls');
    expect(first.value.toolCalls).toEqual([
      { id: 'toolu_weather', name: 'get_weather', arguments: '{"city":"Oslo"}' },
      { id: 'toolu_time', name: 'get_time', arguments: '{"city":"Lima"}' },
    ]);
    const second = await llm.complete(
      ask(
        [
          ...history,
          { role: 'assistant', content: first.value.content, toolCalls: first.value.toolCalls },
          { role: 'tool', toolCallId: 'toolu_weather', name: 'get_weather', content: '-3°C' },
          { role: 'tool', toolCallId: 'toolu_time', name: 'get_time', content: '12:00' },
          { role: 'user', content: 'Answer now.' },
        ],
        { tools: [weather, clock] },
      ),
    );
    expect(second.isOk() && second.value.content).toBe('Oslo is cold; it is noon in Lima.');
    const body = server.requests[1];
    expect(body?.tools).toEqual([
      { name: 'get_weather', description: 'The weather in a city.', input_schema: weather.parameters },
      { name: 'get_time', description: 'The local time in a city.', input_schema: clock.parameters },
    ]);
    expect(body?.tool_choice).toEqual({ type: 'auto' });
    expect(body?.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(blocksOf(body, 1)).toEqual([
      { type: 'text', text: 'Looking both up.' },
      { type: 'tool_use', id: 'toolu_weather', name: 'get_weather', input: { city: 'Oslo' } },
      { type: 'tool_use', id: 'toolu_time', name: 'get_time', input: { city: 'Lima' } },
    ]);
    expect(blocksOf(body, 2)).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_weather', content: '-3°C' },
      { type: 'tool_result', tool_use_id: 'toolu_time', content: '12:00' },
      { type: 'text', text: 'Answer now.' },
    ]);
  });

  it('sends a call whose arguments are not a JSON object with `{}` as its input, and keeps going', async () => {
    const server = await serve([{ content: 'Retrying.' }]);
    const result = await llmFor(server).complete(
      ask(
        [
          { role: 'user', content: 'Weather?' },
          {
            role: 'assistant',
            content: '',
            toolCalls: [{ id: 'toolu_bad', name: 'get_weather', arguments: '{"city": Oslo' }],
          },
          { role: 'tool', toolCallId: 'toolu_bad', name: 'get_weather', content: 'Error: not valid JSON' },
        ],
        { tools: [weather] },
      ),
    );
    expect(result.isOk()).toBe(true);
    expect(blocksOf(server.requests[0], 1)).toEqual([
      { type: 'tool_use', id: 'toolu_bad', name: 'get_weather', input: {} },
    ]);
  });

  it('maps the tool choice: required is `any`, none is `none`', async () => {
    const server = await serve([{ content: 'a' }, { content: 'b' }]);
    const llm = llmFor(server);
    await llm.complete(ask([{ role: 'user', content: 'x' }], { tools: [weather], toolChoice: 'required' }));
    await llm.complete(ask([{ role: 'user', content: 'x' }], { tools: [weather], toolChoice: 'none' }));
    expect(server.requests.map((r) => r.tool_choice)).toEqual([{ type: 'any' }, { type: 'none' }]);
  });

  it('streams: text and tool-call pieces reach onDelta, and the response is the non-streamed one', async () => {
    const reply = {
      content: 'Checking the weather in two cities, which takes a sentence.',
      toolCalls: [
        { id: 'toolu_a', name: 'get_weather', arguments: { city: 'Reykjavik, Iceland' } },
        { id: 'toolu_b', name: 'get_weather', arguments: { city: 'Ushuaia, Argentina' } },
      ],
      usage: { inputTokens: 40, outputTokens: 30 },
    };
    const server = await serve([reply, reply]);
    const request = ask([{ role: 'user', content: 'Weather?' }], { tools: [weather] });
    const deltas: LlmDelta[] = [];
    const streamed = await llmFor(server, { stream: true }).complete(request, { onDelta: (d) => deltas.push(d) });
    const whole = await llmFor(server).complete(request);
    expect(streamed).toEqual(whole);
    expect(server.requests[0]?.stream).toBe(true);
    const text = deltas.flatMap((d) => (d.text ? [d.text] : []));
    expect(text.length).toBeGreaterThan(1);
    expect(text.join('')).toBe(reply.content);
    const pieces = deltas.flatMap((d) => (d.toolCall ? [d.toolCall] : []));
    // Who each call is, first; then its arguments in pieces.
    expect(pieces.filter((p) => p.id)).toEqual([
      { index: 0, id: 'toolu_a', name: 'get_weather' },
      { index: 1, id: 'toolu_b', name: 'get_weather' },
    ]);
    for (const index of [0, 1]) {
      const args = pieces.filter((p) => p.index === index && p.arguments).map((p) => p.arguments);
      expect(args.length).toBeGreaterThan(1);
      expect(args.join('')).toBe(JSON.stringify(reply.toolCalls[index]?.arguments));
    }
  });

  it('counts the cache: cachedInputTokens and cacheWriteTokens are parts of inputTokens, priced at Claude’s rates', async () => {
    const usage = { inputTokens: 12_000, outputTokens: 500, cachedInputTokens: 9_000, cacheWriteTokens: 2_000 };
    const server = await serve([
      { content: 'Hi', usage },
      { content: 'Hi', usage },
    ]);
    const request = ask([{ role: 'user', content: 'Hi' }]);
    const whole = await llmFor(server).complete(request);
    const streamed = await llmFor(server, { stream: true }).complete(request);
    // 1,000 fresh × $3 + 9,000 read × $0.30 + 2,000 written × $3.75 + 500 out × $15, per million.
    const expected = { ...usage, costUsd: 0.0207 };
    expect(whole.isOk() && whole.value.usage).toEqual(expected);
    expect(streamed.isOk() && streamed.value.usage).toEqual(expected);
  });

  it('an unpriced model’s usage has no cost', async () => {
    const server = await serve([{ content: 'Hi', usage: { inputTokens: 5, outputTokens: 1 } }]);
    const result = await llmFor(server, { model: 'claude-unknown' }).complete(ask([{ role: 'user', content: 'Hi' }]));
    expect(result.isOk() && result.value.usage).toEqual({
      inputTokens: 5,
      outputTokens: 1,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
    });
  });

  it('puts cache breakpoints on the last tool, the system prompt and the stable prefix’s last block, and nowhere else', async () => {
    const server = await serve([{ content: 'ok' }]);
    const messages: Message[] = [
      { role: 'system', content: 'You look things up.' },
      { role: 'user', content: 'Weather in Oslo?' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Oslo"}' }],
      },
      { role: 'tool', toolCallId: 'toolu_1', name: 'get_weather', content: '-3°C' },
      // Not part of the stable prefix: the next-step prompt.
      { role: 'user', content: 'What next?' },
    ];
    await llmFor(server).complete(
      ask(messages, { tools: [weather, clock], cache: { key: 'run-1', stableMessages: 4 } }),
    );
    const body = server.requests[0] as RecordedAnthropicRequest;
    const marked = JSON.stringify(body).split('"cache_control"').length - 1;
    expect(marked).toBe(3);
    expect(body.tools?.map((t) => t.cache_control)).toEqual([undefined, { type: 'ephemeral' }]);
    expect(body.system).toEqual([{ type: 'text', text: 'You look things up.', cache_control: { type: 'ephemeral' } }]);
    expect(blocksOf(body, 2)).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_1', content: '-3°C', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'What next?' },
    ]);
  });

  it('without cache hints it marks nothing, and a request’s breakpoint does not stay on the next one', async () => {
    const server = await serve([{ content: 'a' }, { content: 'b' }]);
    const llm = llmFor(server);
    const messages: Message[] = [
      { role: 'system', content: 'S' },
      { role: 'user', content: 'one' },
    ];
    await llm.complete(ask(messages, { tools: [weather], cache: { stableMessages: 2 } }));
    await llm.complete(ask(messages, { tools: [weather] }));
    expect(JSON.stringify(server.requests[0])).toContain('cache_control');
    expect(JSON.stringify(server.requests[1])).not.toContain('cache_control');
  });

  it('sends images: a user’s before its text, a tool’s inside its tool_result; none without vision', async () => {
    const source = { type: 'base64', media_type: 'image/png', data: PIXEL.base64 };
    const server = await serve([{ content: 'a' }, { content: 'b' }]);
    const messages: Message[] = [
      { role: 'user', content: 'What is this?', image: PIXEL },
      { role: 'assistant', content: '', toolCalls: [{ id: 'toolu_s', name: 'screenshot', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'toolu_s', name: 'screenshot', content: 'the page', image: PIXEL },
    ];
    await llmFor(server, { vision: true }).complete(ask(messages));
    await llmFor(server).complete(ask(messages));
    const [seeing, blind] = server.requests;
    expect(blocksOf(seeing, 0)).toEqual([
      { type: 'image', source },
      { type: 'text', text: 'What is this?' },
    ]);
    expect(blocksOf(seeing, 2)).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_s',
        content: [
          { type: 'text', text: 'the page' },
          { type: 'image', source },
        ],
      },
    ]);
    expect(JSON.stringify(blind)).not.toContain('"image"');
    expect(blocksOf(blind, 2)).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_s', content: 'the page' }]);
  });

  it('in the prompt tool mode sends no tools and reads the calls from the text', async () => {
    const server = await serve([
      { content: 'Sure.\n<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>' },
    ]);
    const result = await llmFor(server, { toolMode: 'prompt' }).complete(
      ask(
        [
          { role: 'system', content: 'You look things up.' },
          { role: 'user', content: 'Weather?' },
        ],
        { tools: [weather] },
      ),
    );
    expect(result.isOk() && result.value).toMatchObject({
      content: 'Sure.',
      toolCalls: [{ name: 'get_weather', arguments: '{"city":"Oslo"}' }],
      finishReason: 'tool_calls',
    });
    const [body] = server.requests;
    expect(body?.tools).toBeUndefined();
    expect(body?.tool_choice).toBeUndefined();
    expect(JSON.stringify(body?.system)).toContain('get_weather');
  });

  it('in the prompt tool mode the stable prefix’s breakpoint stays on its last message, behind the tools prompt it adds', async () => {
    const server = await serve([{ content: 'ok' }]);
    const messages: Message[] = [
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'call_0', name: 'get_weather', arguments: '{"city":"Oslo"}' }],
      },
      { role: 'tool', toolCallId: 'call_0', name: 'get_weather', content: '-3°C' },
      { role: 'user', content: 'What next?' },
    ];
    await llmFor(server, { toolMode: 'prompt' }).complete(
      ask(messages, { tools: [weather], cache: { stableMessages: 3 } }),
    );
    const body = server.requests[0] as RecordedAnthropicRequest;
    expect(body.system).toMatchObject([{ type: 'text', cache_control: { type: 'ephemeral' } }]);
    expect(blocksOf(body, 2)).toEqual([
      {
        type: 'text',
        text: '<tool_result name="get_weather">\n-3°C\n</tool_result>',
        cache_control: { type: 'ephemeral' },
      },
      { type: 'text', text: 'What next?' },
    ]);
  });

  it('a reply cut at max_tokens says `length`', async () => {
    const server = await serve([{ content: 'The beginning of a long', finishReason: 'length' }]);
    const result = await llmFor(server).complete(ask([{ role: 'user', content: 'Write a lot.' }]));
    expect(result.isOk() && result.value).toMatchObject({ content: 'The beginning of a long', finishReason: 'length' });
  });
});

describe('extended thinking', () => {
  const reasoning = [
    { text: 'The user wants the weather; I should call the tool.', signature: 'sig-abc' },
    { text: '', redacted: 'ENCRYPTED==' },
  ];

  it('asks for it with its budget, and the thinking comes back as the reply’s reasoning, streamed or not', async () => {
    const reply = { reasoning, toolCalls: [{ id: 'toolu_w', name: 'get_weather', arguments: { city: 'Oslo' } }] };
    const server = await serve([reply, reply]);
    const request = ask([{ role: 'user', content: 'Weather?' }], { tools: [weather], toolChoice: 'required' });
    const options = { thinking: { budgetTokens: 2048 }, temperature: 0.2 };
    const whole = await llmFor(server, options).complete(request);
    const streamed = await llmFor(server, { ...options, stream: true }).complete(request);
    expect(whole.isOk() && whole.value.reasoning).toEqual([
      { text: 'The user wants the weather; I should call the tool.', signature: 'sig-abc' },
      { text: '', redacted: 'ENCRYPTED==' },
    ]);
    expect(streamed).toEqual(whole);
    const [body] = server.requests;
    expect(body?.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(body?.max_tokens).toBe(2048 + 8192);
    // The API takes neither a temperature nor a forced tool call with thinking.
    expect(body?.temperature).toBeUndefined();
    expect(body?.tool_choice).toEqual({ type: 'auto' });
  });

  it('keeps the thinking on the assistant message of a run and sends it back first in that turn', async () => {
    const server = await serve([
      { reasoning, toolCalls: [{ id: 'toolu_w', name: 'echo', arguments: { text: 'sunny' } }] },
      { content: 'It is sunny.' },
    ]);
    const echo = defineTool({
      name: 'echo',
      description: 'Echo',
      parameters: z.object({ text: z.string() }),
      execute: ({ text }) => text,
    });
    const agent = createAgent({
      name: 'thinker',
      systemPrompt: 'Think first.',
      tools: [echo],
      policies: defaultPolicies({ maxSteps: 3 }),
    });
    const outcome = await run(agent, 'Weather?', { llm: llmFor(server, { thinking: { budgetTokens: 1024 } }) });
    expect(outcome.answer).toBe('It is sunny.');
    const assistant = outcome.state.messages.find((m) => m.role === 'assistant');
    expect(assistant).toMatchObject({ reasoning });
    expect(blocksOf(server.requests[1], 1)).toEqual([
      { type: 'thinking', thinking: 'The user wants the weather; I should call the tool.', signature: 'sig-abc' },
      { type: 'redacted_thinking', data: 'ENCRYPTED==' },
      { type: 'tool_use', id: 'toolu_w', name: 'echo', input: { text: 'sunny' } },
    ]);
  });

  it('refuses a budget the API would refuse, before any request', () => {
    expect(() => createAnthropicLlm({ model: 'm', thinking: { budgetTokens: 100 } })).toThrow(/at least 1024/);
    expect(() => createAnthropicLlm({ model: 'm', maxTokens: 2000, thinking: { budgetTokens: 4000 } })).toThrow(
      /below maxTokens \(2000\)/,
    );
  });
});

describe('failures', () => {
  const request = ask([{ role: 'user', content: 'Hi' }]);

  it('a 429 with Retry-After is retried by the SDK, then succeeds', async () => {
    const server = await serve([{ error: { status: 429, retryAfterMs: 1 } }, { content: 'Finally.' }]);
    const result = await llmFor(server, { maxRetries: 2 }).complete(request);
    expect(result.isOk() && result.value.content).toBe('Finally.');
    expect(server.hits).toBe(2);
  });

  it.each([
    [{ status: 429, retryAfter: 7, message: 'Number of requests has exceeded your rate limit' }, 'rate_limit', 7000],
    [{ status: 529, message: 'Overloaded' }, 'overloaded', undefined],
    [{ status: 401, message: 'invalid x-api-key' }, 'auth', undefined],
    [{ status: 403, message: 'not allowed' }, 'auth', undefined],
    [{ status: 400, message: 'prompt is too long: 215000 tokens > 200000 maximum' }, 'context_length', undefined],
    [{ status: 400, message: 'messages: roles must alternate' }, 'bad_request', undefined],
    [{ status: 500, message: 'Internal server error' }, 'server', undefined],
  ] as const)('HTTP %j is a %s error with the API’s message', async (failure, kind, retryAfterMs) => {
    const server = await serve([{ error: failure }]);
    const result = await llmFor(server).complete(request);
    expect(result).toEqual(
      err({
        kind,
        message: failure.message,
        status: failure.status,
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      }),
    );
  });

  it('a context-length error the stand-in words itself reads as context_length', async () => {
    const server = await serve([{ error: { status: 400, code: 'context_length_exceeded' } }]);
    const result = await llmFor(server).complete(request);
    expect(result.isOk() === false && result.error).toMatchObject({ kind: 'context_length', status: 400 });
    expect(result.isOk() === false && result.error.message).toMatch(
      /^prompt is too long: \d+ tokens > 200000 maximum$/,
    );
  });

  it('a dropped connection is a network error', async () => {
    const server = await serve([{ error: {} }]);
    const result = await llmFor(server).complete(request);
    expect(result.isOk() === false && result.error.kind).toBe('network');
  });

  it('an overloaded error in the stream is retried: the listener hears a restart, then the whole reply', async () => {
    const answer = 'A whole answer, long enough for several pieces.';
    const server = await serve([{ content: answer, midStreamError: { after: 5 } }, { content: answer }]);
    const deltas: LlmDelta[] = [];
    const result = await llmFor(server, { stream: true, maxRetries: 1 }).complete(request, {
      onDelta: (d) => deltas.push(d),
    });
    expect(result.isOk() && result.value.content).toBe(answer);
    const restart = deltas.findIndex((d) => d.restart);
    expect(restart).toBeGreaterThan(0);
    expect(
      deltas
        .slice(restart + 1)
        .map((d) => d.text)
        .join(''),
    ).toBe(answer);
    expect(server.hits).toBe(2);
  });

  it('an overloaded error in the stream, with no retries left, is an overloaded error', async () => {
    const server = await serve([{ content: 'Half of it', midStreamError: { after: 4, message: 'Overloaded' } }]);
    const result = await llmFor(server, { stream: true }).complete(request);
    expect(result).toEqual(err({ kind: 'overloaded', message: 'Overloaded' }));
  });

  it('an invalid-request error in the stream is not retried', async () => {
    const server = await serve([
      { content: 'x', midStreamError: { after: 3, type: 'invalid_request_error', message: 'bad tool input' } },
      { content: 'never asked for' },
    ]);
    const result = await llmFor(server, { stream: true, maxRetries: 2 }).complete(request);
    expect(result).toEqual(err({ kind: 'bad_request', message: 'bad tool input' }));
    expect(server.hits).toBe(1);
  });

  it.each([true, false])('a reply cut mid-way is requested again (stream: %s)', async (streamed) => {
    const answer = 'The answer, at last, after the first reply broke off.';
    const server = await serve([{ content: answer, cutAfter: 4 }, { content: answer }]);
    const result = await llmFor(server, { stream: streamed, maxRetries: 1 }).complete(request);
    expect(result.isOk() && result.value.content).toBe(answer);
    expect(server.hits).toBe(2);
  });

  it('a stream that ends before message_stop is cut short: a network error once retries are spent', async () => {
    const server = await serve([{ content: 'Half an answer that goes on.', endAfter: 4 }]);
    const result = await llmFor(server, { stream: true }).complete(request);
    expect(result.isOk() === false && result.error.kind).toBe('network');
  });

  it('an abort ends the request at once as `aborted`', async () => {
    const controller = new AbortController();
    const server = await serve([
      () => {
        // The request has reached the server: abort it while the reply stalls.
        queueMicrotask(() => controller.abort());
        return { content: 'never finished', stallAfter: 1 };
      },
    ]);
    const result = await llmFor(server, { stream: true }).complete(request, { signal: controller.signal });
    expect(result).toEqual(err({ kind: 'aborted', message: 'the request was aborted' }));
  });

  it('a delta listener that throws ends the request with its error', async () => {
    const server = await serve([{ content: 'Some text for the listener.' }]);
    const failing = llmFor(server, { stream: true }).complete(request, {
      onDelta: () => {
        throw new Error('listener broke');
      },
    });
    await expect(failing).rejects.toThrow('listener broke');
  });

  it('the script running out is a server error, not retried', async () => {
    const server = await serve([]);
    const result = await llmFor(server, { maxRetries: 2 }).complete(request);
    expect(result.isOk() === false && result.error).toMatchObject({ kind: 'server', status: 500 });
    expect(server.hits).toBe(1);
  });
});

describe('an agent on the Anthropic port', () => {
  it('runs a task through a tool to its answer, the usage summed', async () => {
    const server = await serve([
      {
        toolCalls: [{ id: 'toolu_add', name: 'add', arguments: { a: 2, b: 3 } }],
        usage: { inputTokens: 100, outputTokens: 10, cacheWriteTokens: 80 },
      },
      { content: '2 + 3 = 5.', usage: { inputTokens: 120, outputTokens: 8, cachedInputTokens: 80 } },
    ]);
    const agent = createAgent({
      name: 'adder',
      systemPrompt: 'You add with the tool.',
      tools: [add],
      policies: defaultPolicies({ maxSteps: 4 }),
    });
    const outcome = await run(agent, 'What is 2 + 3?', { llm: llmFor(server, { stream: true }) });
    expect(outcome.status).toBe('finished');
    expect(outcome.answer).toBe('2 + 3 = 5.');
    expect(outcome.usage).toMatchObject({
      inputTokens: 220,
      outputTokens: 18,
      cachedInputTokens: 80,
      cacheWriteTokens: 80,
      llmCalls: 2,
    });
    const second = server.requests[1] as RecordedAnthropicRequest;
    expect(blocksOf(second, 2)?.[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_add', content: '5' });
    // The run's stable prefix (system prompt, task, the tool's call and result) is cached.
    expect(JSON.stringify(second)).toContain('cache_control');
    server.assertConsumed();
  });
});

describe('setup', () => {
  it('no API key anywhere is a config error, and nothing is sent', async () => {
    const server = await serve([{ content: 'never' }]);
    const saved = process.env.ANTHROPIC_API_KEY;
    delete process.env.ANTHROPIC_API_KEY;
    try {
      const llm = createAnthropicLlm({ model: 'claude-sonnet-4-5', baseURL: server.baseURL, maxRetries: 0 });
      const result = await llm.complete(ask([{ role: 'user', content: 'Hi' }]));
      expect(result.isOk() === false && result.error.kind).toBe('config');
      expect(server.hits).toBe(0);
    } finally {
      if (saved !== undefined) process.env.ANTHROPIC_API_KEY = saved;
    }
  });

  it('a stream that goes quiet ends as a timeout', async () => {
    const server = await serve([{ content: 'A reply that stops halfway through.', stallAfter: 3 }]);
    const result = await llmFor(server, { stream: true, idleTimeoutMs: 200 }).complete(
      ask([{ role: 'user', content: 'Hi' }]),
    );
    expect(result).toEqual(err({ kind: 'timeout', message: 'the reply stream went quiet for 200 ms' }));
  });
});

describe('the port conformance kit', () => {
  it('passes the Anthropic port, streamed and not, reasoning included', async () => {
    const report = await checkLlmPort({
      connect: async (script, { stream }) => {
        const server = await startAnthropicServer({ script });
        const port = createAnthropicLlm({
          model: 'claude-sonnet-4-5',
          apiKey: 'sk-ant-test',
          baseURL: server.baseURL,
          stream,
          maxRetries: 3,
          vision: true,
        });
        return { port, close: () => server.close() };
      },
      capabilities: { reasoning: true },
    });
    expect(report.failures.map((c) => `${c.name}: ${c.detail}`)).toEqual([]);
    expect(report.checks.filter((c) => c.status === 'not applicable')).toEqual([]);
  });
});
