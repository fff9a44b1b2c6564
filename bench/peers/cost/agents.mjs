// OpenAI Agents SDK on the Chat Completions API, tracing off (its exporter posts to a remote host).
import { Agent, run, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled, tool } from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';
import { observe, researchTools, STEP_LIMIT, systemPrompt, task } from '../../cost/research.mjs';

export async function research({ baseURL, model }) {
  setTracingDisabled(true);
  setOpenAIAPI('chat_completions');
  setDefaultOpenAIClient(new OpenAI({ apiKey: 'bench', baseURL, maxRetries: 0 }));
  const tools = researchTools.map(({ name, description, argument }) =>
    tool({ name, description, parameters: z.object({ [argument]: z.string() }), execute: (args) => observe(name, args) }),
  );
  const agent = new Agent({ name: 'research', instructions: systemPrompt, model, tools });
  return (await run(agent, task, { maxTurns: STEP_LIMIT })).finalOutput;
}
