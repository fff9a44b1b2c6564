import { createAgent, createOpenAiLlm, defaultPolicies, defineTool, run, terminate } from '@openmanus/core';
import { type OpenAiServer, startOpenAiServer } from '@openmanus/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { withTracing } from '../src/withTracing.js';
import { collector } from './collector.js';

let server: OpenAiServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a city up.',
  parameters: z.object({ city: z.string() }),
  execute: () => 'Kyoto: 1.46 million people',
});
const agent = createAgent({
  name: 'helper',
  tools: [lookup, terminate],
  policies: defaultPolicies({ maxSteps: 5 }),
  tokenizer: 'estimate',
});

const script = [
  {
    toolCalls: [{ name: 'lookup', arguments: { city: 'Kyoto' } }],
    usage: { inputTokens: 1_000, outputTokens: 100, cachedInputTokens: 0, reasoningTokens: 60 },
  },
  {
    content: 'About 1.46 million.',
    toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }],
    usage: { inputTokens: 1_200, outputTokens: 20, cachedInputTokens: 1_000, reasoningTokens: 0 },
  },
];

async function traced(model: string) {
  server = await startOpenAiServer({ script });
  const llm = createOpenAiLlm({ model, apiKey: 'k', baseURL: server.baseURL, maxRetries: 0 });
  const spans = collector();
  const tracer = spans.provider.getTracer('test');
  const outcome = await run(agent, 'How many in Kyoto?', withTracing(agent, { llm, runId: 'r' }, { tracer }));
  return { spans, outcome, chats: spans.byName(`chat ${model}`).map((span) => span.attributes) };
}

describe('usage on spans', () => {
  it("carries the cache and reasoning counts the provider reported, and each call's cost and the run's", async () => {
    const { spans, outcome, chats } = await traced('o4-mini');
    expect(outcome.status).toBe('finished');
    // At o4-mini's $1.10 in, $0.275 cached, $4.40 out per million.
    expect(chats).toEqual([
      expect.objectContaining({
        'gen_ai.usage.input_tokens': 1_000,
        'gen_ai.usage.output_tokens': 100,
        'gen_ai.usage.cache_read.input_tokens': 0,
        'gen_ai.usage.reasoning.output_tokens': 60,
        'openmanus.usage.cost_usd': 0.00154,
      }),
      expect.objectContaining({
        'gen_ai.usage.input_tokens': 1_200,
        'gen_ai.usage.cache_read.input_tokens': 1_000,
        'gen_ai.usage.reasoning.output_tokens': 0,
        'openmanus.usage.cost_usd': 0.000583,
      }),
    ]);
    expect(spans.one('invoke_agent helper').attributes).toMatchObject({
      'gen_ai.usage.input_tokens': 2_200,
      'gen_ai.usage.output_tokens': 120,
      'gen_ai.usage.cache_read.input_tokens': 1_000,
      'gen_ai.usage.reasoning.output_tokens': 60,
      'openmanus.usage.llm_calls': 2,
      'openmanus.usage.cost_usd': 0.002123,
    });
  });

  it('has no cost attribute where the cost is unknown, the counts still there', async () => {
    const { spans, chats } = await traced('unpriced-model');
    for (const attributes of [...chats, spans.one('invoke_agent helper').attributes]) {
      expect(attributes).toHaveProperty(['gen_ai.usage.cache_read.input_tokens']);
      expect(attributes).not.toHaveProperty(['openmanus.usage.cost_usd']);
    }
  });
});
