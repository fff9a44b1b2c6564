// LangGraph's prebuilt ReAct agent with ChatOpenAI (not streaming: streaming fetches tokenizer data).
import { tool } from '@langchain/core/tools';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';
import { addTool, makeAdd } from '../../contenders/shared.mjs';

export const entry = ['@langchain/langgraph/prebuilt', '@langchain/openai'];

export function create({ baseURL, toolDelayMs }) {
  const add = tool(makeAdd(toolDelayMs), { ...addTool, schema: z.object({ a: z.number(), b: z.number() }) });
  return async (model) => {
    const llm = new ChatOpenAI({ model, apiKey: 'bench', configuration: { baseURL }, maxRetries: 0 });
    const agent = createReactAgent({ llm, tools: [add], prompt: 'You add numbers.' });
    const out = await agent.invoke({ messages: [{ role: 'user', content: 'Keep adding.' }] }, { recursionLimit: 10_000 });
    return out.messages.at(-1).content;
  };
}
