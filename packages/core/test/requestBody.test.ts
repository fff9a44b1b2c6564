import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { createAgent } from '../src/kernel/agent.js';
import { createOpenAiLlm } from '../src/llm/openai.js';
import { run } from '../src/shell/run.js';
import { defineTool } from '../src/tools/defineTool.js';
import { useOpenAiServers } from './servers.js';

const { serve } = useOpenAiServers({ maxRetries: 0 });

const add = defineTool({
  name: 'add',
  description: 'Add two numbers',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  execute: ({ a, b }: { a: number; b: number }) => String(a + b),
});

/** A real SDK client whose fetch keeps every body it sends. */
function capturingClient(baseURL: string) {
  const bodies: unknown[] = [];
  const client = new OpenAI({
    apiKey: 'k',
    baseURL,
    maxRetries: 0,
    fetch: (url, init) => {
      bodies.push(init?.body);
      return fetch(url, init);
    },
  });
  return { client, bodies };
}

describe('the request body', () => {
  it.each([false, true])(
    'is the JSON of the request, written from the history kept since the last one (stream: %s)',
    async (streamed) => {
      const turns = 6;
      const server = await serve([
        ...Array.from({ length: turns }, (_, i) => ({ toolCalls: [{ name: 'add', arguments: { a: i, b: 1 } }] })),
        { content: 'done' },
      ]);
      const { client, bodies } = capturingClient(server.baseURL);
      // The next-step prompt is sent with each request but not kept, and only 5 messages are: the
      // history sent is not always the last request's plus new messages.
      const agent = createAgent({
        name: 'adder',
        systemPrompt: 'You add numbers.',
        nextStepPrompt: 'Go on.',
        tools: [add],
        memory: { maxMessages: 5 },
      });
      const llm = createOpenAiLlm({ model: 'm', client, stream: streamed });
      const result = await run(agent, 'add "quoted" – and ünïcode', { llm });

      expect(result.answer).toBe('done');
      expect(bodies).toHaveLength(turns + 1);
      // Sent as text the SDK passed on verbatim, and the server read each as the request it is.
      for (const [i, body] of bodies.entries()) {
        // Ours, not the SDK's serialisation of the params (which would begin with the model).
        expect(body).toMatch(/^\{"messages":\[/);
        expect(JSON.parse(body as string)).toEqual(server.requests[i]);
      }
      const last = server.requests[turns];
      expect(last?.messages.at(-1)).toEqual({ role: 'user', content: 'Go on.' });
      expect(last?.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['5', '6']);
      expect(last).toMatchObject({ model: 'm', tool_choice: 'auto', ...(streamed ? { stream: true } : {}) });
      expect(last?.tools?.[0]).toMatchObject({ function: { name: 'add' } });
    },
  );
});
