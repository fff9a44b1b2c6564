// The append-only reference: a hand-written loop on the raw openai SDK, every request all messages so far.
import OpenAI from 'openai';
import { observe, researchTools, systemPrompt, task } from '../research.mjs';

export async function research({ baseURL, model }) {
  const client = new OpenAI({ apiKey: 'bench', baseURL, maxRetries: 0 });
  const tools = researchTools.map(({ name, description, argument }) => ({
    type: 'function',
    function: {
      name,
      description,
      parameters: { type: 'object', properties: { [argument]: { type: 'string' } }, required: [argument] },
    },
  }));
  const messages = [
    { role: 'system', content: systemPrompt },
    { role: 'user', content: task },
  ];
  for (;;) {
    const { message } = (await client.chat.completions.create({ model, messages, tools, tool_choice: 'auto' }))
      .choices[0];
    messages.push(message);
    if (!message.tool_calls?.length) return message.content;
    for (const call of message.tool_calls)
      messages.push({
        role: 'tool',
        tool_call_id: call.id,
        content: observe(call.function.name, JSON.parse(call.function.arguments)),
      });
  }
}
