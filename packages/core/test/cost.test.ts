import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../src/kernel/agent.js';
import type { LlmRequest } from '../src/kernel/effects.js';
import { defaultPolicies } from '../src/kernel/policies.js';
import { costOf } from '../src/kernel/state.js';
import { BUILT_IN_PRICES, callCost, priceOf } from '../src/llm/prices.js';
import { run, stream } from '../src/shell/run.js';
import { compactRunItem, type RunItem } from '../src/shell/runItems.js';
import { defineTool } from '../src/tools/defineTool.js';
import { useOpenAiServers } from './servers.js';

const { serve, llmFor } = useOpenAiServers({ maxRetries: 0 });

const request = (extra: Partial<LlmRequest> = {}): LlmRequest => ({
  messages: [{ role: 'user', content: 'hi' }],
  tools: [],
  toolChoice: 'auto',
  ...extra,
});

const echo = defineTool({
  name: 'echo',
  description: 'Echo the text',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => text,
});
const agent = createAgent({
  name: 'echoer',
  systemPrompt: 'You echo.',
  tools: [echo],
  policies: defaultPolicies({ maxSteps: 5 }),
});

describe('prices', () => {
  it('match a model by its exact name, then as a dated snapshot, and never by a guess', () => {
    expect(priceOf('gpt-4o')).toBe(BUILT_IN_PRICES['gpt-4o']);
    expect(priceOf('gpt-4o-2024-08-06')).toBe(BUILT_IN_PRICES['gpt-4o']);
    expect(priceOf('claude-sonnet-4-20250514')).toBe(BUILT_IN_PRICES['claude-sonnet-4']);
    // A snapshot of its own price is found under its own name first.
    expect(priceOf('gpt-4o-2024-05-13')).toEqual({ input: 5, output: 15 });
    for (const model of ['gpt-4o-mini-tts', 'openai/gpt-4o', 'GPT-4o', 'gpt-4o-latest', 'my-model', 'toString']) {
      expect(priceOf(model)).toBeUndefined();
    }
  });

  it("take the host's table first", () => {
    const mine = { input: 1, output: 2 };
    expect(priceOf('gpt-4o', { 'gpt-4o': mine })).toBe(mine);
    expect(priceOf('my-model-2025-01-31', { 'my-model': mine })).toBe(mine);
  });

  it('price a call: fresh input, cached input, cache writes and output, each at its own rate', () => {
    const price = { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 };
    const usage = { inputTokens: 10_000, outputTokens: 1_000, cachedInputTokens: 6_000, cacheWriteTokens: 2_000 };
    // 2,000 fresh × 3 + 6,000 × 0.3 + 2,000 × 3.75 + 1,000 × 15, per million.
    expect(callCost(usage, price)).toBe(0.0303);
  });

  it('are unknown where the price cannot tell: no price, no cached price, past its size', () => {
    expect(callCost({ inputTokens: 10, outputTokens: 1 }, undefined)).toBeNull();
    expect(callCost({ inputTokens: 10, outputTokens: 1, cachedInputTokens: 5 }, { input: 1, output: 1 })).toBeNull();
    expect(callCost({ inputTokens: 10, outputTokens: 1, cacheWriteTokens: 5 }, { input: 1, output: 1 })).toBeNull();
    // None cached: the cached price is not needed.
    expect(callCost({ inputTokens: 10, outputTokens: 1, cachedInputTokens: 0 }, { input: 1, output: 1 })).toBe(
      0.000011,
    );
    const capped = { input: 1, output: 1, maxInputTokens: 100 };
    expect(callCost({ inputTokens: 100, outputTokens: 1 }, capped)).toBe(0.000101);
    expect(callCost({ inputTokens: 101, outputTokens: 1 }, capped)).toBeNull();
  });
});

describe('the OpenAI port reports what the reply used', () => {
  it.each([false, true])(
    'cached and reasoning tokens, and the cost at the built-in price (stream: %s)',
    async (stream) => {
      const server = await serve([
        {
          content: 'hello',
          usage: { inputTokens: 2_000, outputTokens: 300, cachedInputTokens: 1_500, reasoningTokens: 200 },
        },
      ]);
      const result = await llmFor(server, { model: 'gpt-4o-mini', stream }).complete(request());
      expect(result.isOk() && result.value.usage).toEqual({
        inputTokens: 2_000,
        outputTokens: 300,
        cachedInputTokens: 1_500,
        reasoningTokens: 200,
        // 500 × 0.15 + 1,500 × 0.075 + 300 × 0.6, per million.
        costUsd: 0.0003675,
      });
    },
  );

  it("reads DeepSeek's prompt_cache_hit_tokens and OpenAI's cache writes", async () => {
    const server = await serve([
      {
        content: 'a',
        wireUsage: {
          prompt_tokens: 1_000,
          completion_tokens: 10,
          prompt_cache_hit_tokens: 900,
          prompt_cache_miss_tokens: 100,
        },
      },
      {
        content: 'b',
        wireUsage: {
          prompt_tokens: 1_000,
          completion_tokens: 10,
          prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 1_000 },
        },
      },
    ]);
    const deepseek = await llmFor(server, { model: 'deepseek-chat' }).complete(request());
    // 100 × 0.28 + 900 × 0.028 + 10 × 0.42, per million.
    expect(deepseek.isOk() && deepseek.value.usage).toEqual({
      inputTokens: 1_000,
      outputTokens: 10,
      cachedInputTokens: 900,
      costUsd: 0.0000574,
    });
    const written = await llmFor(server, { model: 'gpt-4.1' }).complete(request());
    expect(written.isOk() && written.value.usage).toEqual({
      inputTokens: 1_000,
      outputTokens: 10,
      cachedInputTokens: 0,
      cacheWriteTokens: 1_000,
      // A write is billed as plain input at OpenAI: 1,000 × 2 + 10 × 8, per million.
      costUsd: 0.00208,
    });
  });

  it("prices with the port's own price, and leaves an unpriced model's cost out", async () => {
    const server = await serve([
      { content: 'a', usage: { inputTokens: 1_000_000, outputTokens: 1_000_000 } },
      { content: 'b', usage: { inputTokens: 10, outputTokens: 1 } },
    ]);
    const priced = await llmFor(server, { model: 'local-llama', price: { input: 0.5, output: 1.5 } }).complete(
      request(),
    );
    expect(priced.isOk() && priced.value.usage?.costUsd).toBe(2);
    const unpriced = await llmFor(server, { model: 'local-llama' }).complete(request());
    expect(unpriced.isOk() && unpriced.value.usage).toEqual({ inputTokens: 10, outputTokens: 1 });
  });
});

describe("a run's usage", () => {
  it('sums the cached tokens and the cost of every call, exactly', async () => {
    const server = await serve([
      {
        toolCalls: [{ name: 'echo', arguments: { text: 'x' } }],
        usage: { inputTokens: 1_000, outputTokens: 100, cachedInputTokens: 0 },
      },
      { content: 'done', usage: { inputTokens: 1_200, outputTokens: 50, cachedInputTokens: 1_000 } },
    ]);
    const outcome = await run(agent, 'echo x', { llm: llmFor(server, { model: 'gpt-4o' }) });
    // (1,000 × 2.5 + 100 × 10) + (200 × 2.5 + 1,000 × 1.25 + 50 × 10), per million.
    expect(outcome.usage).toEqual({
      inputTokens: 2_200,
      outputTokens: 150,
      llmCalls: 2,
      cachedInputTokens: 1_000,
      costUsd: 0.00575,
    });
    expect(outcome.state.usage).toEqual(outcome.usage);
  });

  it("counts a tool's own model calls with their cache and cost", async () => {
    const server = await serve([
      { toolCalls: [{ name: 'ask_model', arguments: {} }], usage: { inputTokens: 100, outputTokens: 10 } },
      { content: 'inner', usage: { inputTokens: 400, outputTokens: 20, cachedInputTokens: 200 } },
      { content: 'done', usage: { inputTokens: 100, outputTokens: 10 } },
    ]);
    const askModel = defineTool({
      name: 'ask_model',
      description: 'Ask the model itself',
      parameters: z.object({}),
      execute: async (_args, scope) => {
        const reply = await scope.llm.complete(request());
        return reply.isOk() ? reply.value.content : 'failed';
      },
    });
    const asker = createAgent({
      name: 'asker',
      systemPrompt: 'You ask.',
      tools: [askModel],
      policies: defaultPolicies({ maxSteps: 5 }),
    });
    const outcome = await run(asker, 'go', { llm: llmFor(server, { model: 'gpt-4o-mini' }) });
    // 200 × 0.15 + 20 × 0.6 + 200 cached × 0.075 + 2 × (100 × 0.15 + 10 × 0.6), per million.
    expect(outcome.usage).toEqual({
      inputTokens: 600,
      outputTokens: 40,
      llmCalls: 3,
      cachedInputTokens: 200,
      costUsd: 0.000099,
    });
  });

  it("reaches the run's items: each reply's own usage, and the run's so far in the wire form", async () => {
    const server = await serve([
      { content: 'done', usage: { inputTokens: 1_000, outputTokens: 10, cachedInputTokens: 800, reasoningTokens: 4 } },
    ]);
    const items: RunItem[] = [];
    for await (const item of stream(agent, 'hi', { llm: llmFor(server, { model: 'gpt-4o' }) })) items.push(item);
    const replied = items.find((item) => item.type === 'event' && item.event.type === 'llmResponded');
    if (replied?.type !== 'event') throw new Error('no llmResponded item');
    // 200 × 2.5 + 800 × 1.25 + 10 × 10, per million.
    const usage = { inputTokens: 1_000, outputTokens: 10, cachedInputTokens: 800, reasoningTokens: 4, costUsd: 0.0016 };
    expect(replied.event).toMatchObject({ usage });
    expect(compactRunItem(replied)).toMatchObject({ usage: { ...usage, llmCalls: 1 } });
    const result = items.at(-1);
    expect(result?.type === 'result' && compactRunItem(result)).toMatchObject({ result: { usage } });
  });

  it('has an unknown cost when its model has no price', async () => {
    const server = await serve([
      { content: 'done', usage: { inputTokens: 10, outputTokens: 2, cachedInputTokens: 4 } },
    ]);
    const outcome = await run(agent, 'hi', { llm: llmFor(server, { model: 'unheard-of-model' }) });
    expect(outcome.usage.cachedInputTokens).toBe(4);
    expect(costOf(outcome.usage)).toBeNull();
  });
});

describe('prompt_cache_key', () => {
  it("is the request's cache key, in the body the port writes, streamed or not", async () => {
    const server = await serve([{ content: 'a' }, { content: 'b' }, { content: 'c' }]);
    const cache = { key: 'run-42', stableMessages: 1 };
    await llmFor(server).complete(request({ cache }));
    await llmFor(server, { stream: true }).complete(request({ cache }));
    await llmFor(server).complete(request());
    expect(server.requests.map((body) => body.prompt_cache_key)).toEqual(['run-42', 'run-42', undefined]);
    // The rest of the body is as it was.
    expect(server.requests[0]).toMatchObject({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
  });

  it('is not sent when the profile turns it off, or the request has no key', async () => {
    const server = await serve([{ content: 'a' }, { content: 'b' }]);
    await llmFor(server, { promptCacheKey: false }).complete(request({ cache: { key: 'run-42', stableMessages: 1 } }));
    await llmFor(server).complete(request({ cache: { stableMessages: 1 } }));
    expect(server.requests.map((body) => 'prompt_cache_key' in body)).toEqual([false, false]);
  });
});
