// The AI SDK with its OpenAI provider on Chat Completions, the step limit raised; streamed with streamText.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import { addTool, makeAdd, show } from '../../contenders/shared.mjs';

export const entry = ['ai', '@ai-sdk/openai'];

export function create({ baseURL, toolDelayMs, stream }) {
  const provider = createOpenAI({ baseURL, apiKey: 'bench' });
  const add = tool({ description: addTool.description, inputSchema: z.object({ a: z.number(), b: z.number() }), execute: makeAdd(toolDelayMs) });
  return async (model) => {
    const options = {
      model: provider.chat(model),
      system: 'You add numbers.',
      prompt: 'Keep adding.',
      tools: { add },
      stopWhen: stepCountIs(1_000),
      maxRetries: 0,
    };
    if (!stream) return (await generateText(options)).text;
    const result = streamText(options);
    for await (const part of result.fullStream) {
      if (part.type === 'text-delta') show(part.text);
      else if (part.type === 'tool-input-delta') show(part.delta);
      else if (part.type === 'error') throw part.error;
    }
    return result.text;
  };
}
