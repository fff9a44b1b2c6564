// LangGraph's prebuilt ReAct agent with ChatOpenAI.
import { tool } from '@langchain/core/tools';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';
import { observe, researchTools, STEP_LIMIT, systemPrompt, task } from '../../cost/research.mjs';

export async function research({ baseURL, model }) {
  const tools = researchTools.map(({ name, description, argument }) =>
    tool((args) => observe(name, args), { name, description, schema: z.object({ [argument]: z.string() }) }),
  );
  const llm = new ChatOpenAI({ model, apiKey: 'bench', configuration: { baseURL }, maxRetries: 0 });
  const agent = createReactAgent({ llm, tools, prompt: systemPrompt });
  // Its limit counts graph steps: a model node and a tools node per step, and the answer.
  const result = await agent.invoke({ messages: [{ role: 'user', content: task }] }, { recursionLimit: 2 * STEP_LIMIT + 1 });
  return result.messages.at(-1).content;
}
