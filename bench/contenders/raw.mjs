// The floor: a hand-written tool loop on the raw openai SDK.
import OpenAI from 'openai';
import { addTool, makeAdd } from './shared.mjs';

export const entry = ['openai'];

const parameters = {
  type: 'object',
  properties: { a: { type: 'number' }, b: { type: 'number' } },
  required: ['a', 'b'],
};

/** The loop, with the tool's arguments checked by `check` (as they come, for the plain loop). */
export const rawLoopWith =
  (check) =>
  ({ baseURL, toolDelayMs }) => {
    const client = new OpenAI({ apiKey: 'bench', baseURL, maxRetries: 0 });
    const tools = [{ type: 'function', function: { ...addTool, parameters } }];
    const add = makeAdd(toolDelayMs);
    return async (model) => {
      const messages = [
        { role: 'system', content: 'You add numbers.' },
        { role: 'user', content: 'Keep adding.' },
      ];
      for (;;) {
        const completion = await client.chat.completions.create({ model, messages, tools, tool_choice: 'auto' });
        const message = completion.choices[0].message;
        messages.push(message);
        if (!message.tool_calls?.length) return message.content;
        // One by one, as a plain loop (and OpenManus) would.
        for (const call of message.tool_calls) {
          const content = await add(check(JSON.parse(call.function.arguments)));
          messages.push({ role: 'tool', tool_call_id: call.id, content });
        }
      }
    };
  };

export const create = rawLoopWith((args) => args);
