// The AI SDK with its OpenAI provider on Chat Completions, the step limit raised.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, tool } from 'ai';
import { z } from 'zod';
import { addTool, makeAdd } from '../../contenders/shared.mjs';

export const entry = ['ai', '@ai-sdk/openai'];

export function create({ baseURL, toolDelayMs }) {
  const provider = createOpenAI({ baseURL, apiKey: 'bench' });
  const add = tool({ description: addTool.description, inputSchema: z.object({ a: z.number(), b: z.number() }), execute: makeAdd(toolDelayMs) });
  return async (model) => {
    const result = await generateText({
      model: provider.chat(model),
      system: 'You add numbers.',
      prompt: 'Keep adding.',
      tools: { add },
      stopWhen: stepCountIs(1_000),
      maxRetries: 0,
    });
    return result.text;
  };
}
