// OpenAI Agents SDK on the Chat Completions API, tracing off (its exporter posts to a remote host).
import { Agent, run, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled, tool } from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';
import { addTool, makeAdd } from '../../contenders/shared.mjs';

export const entry = ['@openai/agents'];

export function create({ baseURL, toolDelayMs }) {
  setTracingDisabled(true);
  setOpenAIAPI('chat_completions');
  setDefaultOpenAIClient(new OpenAI({ apiKey: 'bench', baseURL, maxRetries: 0 }));
  const add = tool({ ...addTool, parameters: z.object({ a: z.number(), b: z.number() }), execute: makeAdd(toolDelayMs) });
  return async (model) => {
    const agent = new Agent({ name: 'bench', instructions: 'You add numbers.', model, tools: [add] });
    const result = await run(agent, 'Keep adding.', { maxTurns: 1_000 });
    return result.finalOutput;
  };
}
