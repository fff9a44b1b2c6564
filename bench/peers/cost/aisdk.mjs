// The AI SDK with its OpenAI provider on Chat Completions, the step limit raised.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, tool } from 'ai';
import { z } from 'zod';
import { observe, researchTools, STEP_LIMIT, systemPrompt, task } from '../../cost/research.mjs';

export async function research({ baseURL, model }) {
  const provider = createOpenAI({ baseURL, apiKey: 'bench' });
  const tools = Object.fromEntries(
    researchTools.map(({ name, description, argument }) => [
      name,
      tool({ description, inputSchema: z.object({ [argument]: z.string() }), execute: (args) => observe(name, args) }),
    ]),
  );
  const result = await generateText({
    model: provider.chat(model),
    system: systemPrompt,
    prompt: task,
    tools,
    stopWhen: stepCountIs(STEP_LIMIT),
    maxRetries: 0,
  });
  return result.text;
}
