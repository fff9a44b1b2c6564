// The floor: a hand-written tool loop on the raw openai SDK, streamed or not.
import OpenAI from 'openai';
import { addTool, makeAdd, show } from './shared.mjs';

export const entry = ['openai'];

const parameters = {
  type: 'object',
  properties: { a: { type: 'number' }, b: { type: 'number' } },
  required: ['a', 'b'],
};

/** The SDK's raw chunk stream read into the assistant message by hand: text joined, calls by index. */
async function streamed(client, body) {
  const chunks = await client.chat.completions.create({
    ...body,
    stream: true,
    stream_options: { include_usage: true },
  });
  let content = '';
  const calls = [];
  for await (const chunk of chunks) {
    const delta = chunk.choices[0]?.delta;
    if (!delta) continue;
    if (delta.content) {
      content += delta.content;
      show(delta.content);
    }
    for (const piece of delta.tool_calls ?? []) {
      calls[piece.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } };
      const call = calls[piece.index];
      if (piece.id) call.id = piece.id;
      if (piece.function?.name) call.function.name = piece.function.name;
      if (piece.function?.arguments) {
        call.function.arguments += piece.function.arguments;
        show(piece.function.arguments);
      }
    }
  }
  return calls.length ? { role: 'assistant', content, tool_calls: calls } : { role: 'assistant', content };
}

/** The loop, with the tool's arguments checked by `check` (as they come, for the plain loop). */
export const rawLoopWith =
  (check) =>
  ({ baseURL, toolDelayMs, stream }) => {
    const client = new OpenAI({ apiKey: 'bench', baseURL, maxRetries: 0 });
    const tools = [{ type: 'function', function: { ...addTool, parameters } }];
    const add = makeAdd(toolDelayMs);
    return async (model) => {
      const messages = [
        { role: 'system', content: 'You add numbers.' },
        { role: 'user', content: 'Keep adding.' },
      ];
      for (;;) {
        const body = { model, messages, tools, tool_choice: 'auto' };
        const message = stream
          ? await streamed(client, body)
          : (await client.chat.completions.create(body)).choices[0].message;
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
