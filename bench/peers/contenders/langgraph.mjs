// LangGraph's prebuilt ReAct agent with ChatOpenAI; streamed with `.stream` (token chunks and the graph's values).
import { tool } from '@langchain/core/tools';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';
import { addTool, makeAdd, show } from '../../contenders/shared.mjs';

export const entry = ['@langchain/langgraph/prebuilt', '@langchain/openai'];

export function create({ baseURL, toolDelayMs, stream }) {
  const add = tool(makeAdd(toolDelayMs), { ...addTool, schema: z.object({ a: z.number(), b: z.number() }) });
  return async (model) => {
    const llm = new ChatOpenAI({ model, apiKey: 'bench', configuration: { baseURL }, maxRetries: 0, streaming: stream });
    const agent = createReactAgent({ llm, tools: [add], prompt: 'You add numbers.' });
    const input = { messages: [{ role: 'user', content: 'Keep adding.' }] };
    if (!stream) return (await agent.invoke(input, { recursionLimit: 10_000 })).messages.at(-1).content;
    let last;
    for await (const [mode, payload] of await agent.stream(input, {
      recursionLimit: 10_000,
      streamMode: ['messages', 'values'],
    })) {
      if (mode === 'values') last = payload;
      else if (payload[0].getType?.() === 'ai') {
        const [chunk] = payload;
        if (typeof chunk.content === 'string') show(chunk.content);
        for (const piece of chunk.tool_call_chunks ?? []) show(piece.args);
      }
    }
    return last.messages.at(-1).content;
  };
}
