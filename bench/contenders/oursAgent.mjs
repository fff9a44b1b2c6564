import { createAgent, createOpenAiLlm, defineTool, run } from '@openmanus/core';
import { addTool, makeAdd } from './shared.mjs';

/** Our contender with the `add` tool's arguments described by `parameters` (a zod schema or a JSON Schema). */
export const oursWith =
  (parameters) =>
  ({ baseURL, toolDelayMs }) => {
    const add = defineTool({ ...addTool, parameters, parallelSafe: true, execute: makeAdd(toolDelayMs) });
    const llms = new Map();
    return async (model) => {
      if (!llms.has(model)) llms.set(model, createOpenAiLlm({ model, apiKey: 'bench', baseURL, maxRetries: 0 }));
      // The whole history is sent, as by the others, so every contender carries the same payload.
      const agent = createAgent({
        name: 'bench',
        systemPrompt: 'You add numbers.',
        tools: [add],
        maxSteps: 1_000,
        memory: { maxMessages: 100_000 },
      });
      const result = await run(agent, 'Keep adding.', { llm: llms.get(model) });
      return result.answer;
    };
  };
