// Mastra's Agent with its OpenAI-compatible model config.
import { Agent } from '@mastra/core/agent';
import { createTool } from '@mastra/core/tools';
import { z } from 'zod';
import { addTool, makeAdd } from '../../contenders/shared.mjs';

export const entry = ['@mastra/core/agent'];

export function create({ baseURL, toolDelayMs }) {
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
    const result = await agent.generate('Keep adding.', { maxSteps: 1_000 });
    return result.text;
  };
}
