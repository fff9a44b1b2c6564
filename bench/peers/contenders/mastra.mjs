// Mastra's Agent with its OpenAI-compatible model config; streamed with `agent.stream`.
import { Agent } from '@mastra/core/agent';
import { createTool } from '@mastra/core/tools';
import { z } from 'zod';
import { addTool, makeAdd, show } from '../../contenders/shared.mjs';

export const entry = ['@mastra/core/agent'];

export function create({ baseURL, toolDelayMs, stream }) {
  const add = createTool({
    id: addTool.name,
    description: addTool.description,
    inputSchema: z.object({ a: z.number(), b: z.number() }),
    execute: async ({ context }) => makeAdd(toolDelayMs)(context),
  });
  return async (model) => {
    const agent = new Agent({
      name: 'bench',
      instructions: 'You add numbers.',
      model: { providerId: 'openai', modelId: model, url: baseURL, apiKey: 'bench' },
      tools: { add },
    });
    if (!stream) return (await agent.generate('Keep adding.', { maxSteps: 1_000 })).text;
    const result = await agent.stream('Keep adding.', { maxSteps: 1_000 });
    for await (const chunk of result.fullStream) {
      if (chunk.type === 'text-delta') show(chunk.payload.text);
      else if (chunk.type === 'tool-call-delta') show(chunk.payload.argsTextDelta);
      else if (chunk.type === 'error') throw chunk.payload.error;
    }
    return result.text;
  };
}
