import { createAgent, createOpenAiLlm, createRunEmitter, defaultPolicies, defineTool, run } from '@openmanus/core';
import { addTool, makeAdd, show } from './shared.mjs';

/** Our OpenAI port on the bench's server, streamed or not. */
const openAiPort = ({ model, baseURL, stream }) =>
  createOpenAiLlm({ model, apiKey: 'bench', baseURL, maxRetries: 0, stream });

/**
 * Our contender with the `add` tool's arguments described by `parameters` (a zod schema or a JSON
 * Schema), its model reached through the LLM port `portOf` makes (default our OpenAI port).
 */
export const oursWith =
  (parameters, portOf = openAiPort) =>
  ({ baseURL, toolDelayMs, stream }) => {
    const add = defineTool({ ...addTool, parameters, parallelSafe: true, execute: makeAdd(toolDelayMs) });
    const llms = new Map();
    // Streamed: the reply's pieces reach a listener as `delta` items, as a host showing them would get them.
    const emitter = stream ? createRunEmitter() : undefined;
    emitter?.on('delta', (item) => show(item.text ?? item.toolCall?.arguments));
    return async (model) => {
      if (!llms.has(model)) llms.set(model, portOf({ model, baseURL, stream }));
      // The whole history is sent, as by the others, so every contender carries the same payload.
      const agent = createAgent({
        name: 'bench',
        systemPrompt: 'You add numbers.',
        tools: [add],
        policies: defaultPolicies({ maxSteps: 1_000 }),
        memory: { maxMessages: 100_000 },
      });
      const result = await run(agent, 'Keep adding.', { llm: llms.get(model), ...(emitter ? { emitter } : {}) });
      return result.answer;
    };
  };
