// OpenAI Agents SDK on the Chat Completions API, tracing off (its exporter posts to a remote host).
import { Agent, run, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled, tool } from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';
import { addTool, makeAdd, show } from '../../contenders/shared.mjs';

export const entry = ['@openai/agents'];

/** Streamed: text deltas as they come, tool-call argument pieces from the raw chunks (it has no event of its own for them). */
function showEvent(event) {
  if (event.type !== 'raw_model_stream_event') return;
  const { data } = event;
  if (data.type === 'output_text_delta') show(data.delta);
  else if (data.type === 'model') for (const piece of data.event.choices?.[0]?.delta?.tool_calls ?? []) show(piece.function?.arguments);
}

export function create({ baseURL, toolDelayMs, stream }) {
  setTracingDisabled(true);
  setOpenAIAPI('chat_completions');
  setDefaultOpenAIClient(new OpenAI({ apiKey: 'bench', baseURL, maxRetries: 0 }));
  const add = tool({ ...addTool, parameters: z.object({ a: z.number(), b: z.number() }), execute: makeAdd(toolDelayMs) });
  return async (model) => {
    const agent = new Agent({ name: 'bench', instructions: 'You add numbers.', model, tools: [add] });
    if (!stream) return (await run(agent, 'Keep adding.', { maxTurns: 1_000 })).finalOutput;
    const result = await run(agent, 'Keep adding.', { maxTurns: 1_000, stream: true });
    for await (const event of result) showEvent(event);
    await result.completed;
    return result.finalOutput;
  };
}
