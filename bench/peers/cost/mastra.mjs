// Mastra's Agent with its OpenAI-compatible model config (no memory configured: its default).
import { Agent } from '@mastra/core/agent';
import { createTool } from '@mastra/core/tools';
import { z } from 'zod';
import { observe, researchTools, STEP_LIMIT, systemPrompt, task } from '../../cost/research.mjs';

export async function research({ baseURL, model }) {
  const tools = Object.fromEntries(
    researchTools.map(({ name, description, argument }) => [
      name,
      createTool({
        id: name,
        description,
        inputSchema: z.object({ [argument]: z.string() }),
        execute: async ({ context }) => observe(name, context),
      }),
    ]),
  );
  const agent = new Agent({
    name: 'research',
    instructions: systemPrompt,
    model: { providerId: 'openai', modelId: model, url: baseURL, apiKey: 'bench' },
    tools,
  });
  return (await agent.generate(task, { maxSteps: STEP_LIMIT })).text;
}
