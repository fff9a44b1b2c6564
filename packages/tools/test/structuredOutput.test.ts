import { createAgent, createOpenAiLlm, ok, run } from '@openmanus/core';
import { type OpenAiServer, startOpenAiServer, toolSession } from '@openmanus/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CHAT_COMPLETION_TOOL, createChatCompletion, createChatCompletionTool } from '../src/structuredOutput.js';

const city = z.object({
  city: z.string(),
  population: z.number().int().describe('Residents at the last census.'),
});

let server: OpenAiServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The real openai SDK against a scripted server on 127.0.0.1. */
async function modelFrom(script: Parameters<typeof startOpenAiServer>[0]['script']) {
  server = await startOpenAiServer({ script });
  return { llm: createOpenAiLlm({ model: 'gpt-4o', apiKey: 'k', baseURL: server.baseURL, maxRetries: 0 }), server };
}

const answer = (args: unknown) => ({ toolCalls: [{ name: CHAT_COMPLETION_TOOL, arguments: args }] });
const kyoto = { city: 'Kyoto', population: 1463723 };

describe('createChatCompletion', () => {
  it('asks with one forced tool whose parameters are the schema, and returns the validated answer', async () => {
    const { llm, server } = await modelFrom([answer(kyoto)]);
    const result = await createChatCompletion({ llm, schema: city, prompt: 'How many people live in Kyoto?' });
    expect(result).toEqual(ok(kyoto));
    const [request] = server.requests;
    expect(request?.tool_choice).toBe('required');
    expect(request?.tools).toEqual([
      {
        type: 'function',
        function: expect.objectContaining({
          name: 'create_chat_completion',
          parameters: expect.objectContaining({
            type: 'object',
            properties: {
              city: { type: 'string' },
              population: expect.objectContaining({ type: 'integer', description: 'Residents at the last census.' }),
            },
            required: ['city', 'population'],
          }),
        }),
      },
    ]);
    expect(request?.messages).toEqual([{ role: 'user', content: 'How many people live in Kyoto?' }]);
    server.assertConsumed();
  });

  it('sends invalid arguments back with the schema errors, and takes the corrected answer', async () => {
    const { llm, server } = await modelFrom([answer({ city: 'Kyoto', population: 'many' }), answer(kyoto)]);
    const result = await createChatCompletion({
      llm,
      schema: city,
      messages: [
        { role: 'system', content: 'Answer with census figures.' },
        { role: 'user', content: 'Kyoto?' },
      ],
    });
    expect(result).toEqual(ok(kyoto));
    const retry = server.requests[1]?.messages ?? [];
    expect(retry.slice(0, 2)).toEqual(server.requests[0]?.messages);
    expect(retry[2]).toMatchObject({ role: 'assistant', tool_calls: [{ id: 'call_0_0' }] });
    expect(retry[3]).toMatchObject({ role: 'tool', tool_call_id: 'call_0_0' });
    expect(retry[3]?.content).toContain('Invalid input: expected number, received string');
    expect(retry[3]?.content).toContain('→ at population');
  });

  it('fails clearly with the last errors when every attempt is invalid', async () => {
    const { llm, server } = await modelFrom(() => answer({ city: 'Kyoto', population: 1.5 }));
    const result = await createChatCompletion({ llm, schema: city, prompt: 'Kyoto?', maxAttempts: 2 });
    expect(result.isOk()).toBe(false);
    if (result.isOk()) return;
    expect(result.error).toMatchObject({ name: 'StructuredOutputError', reason: 'invalid_arguments', attempts: 2 });
    expect(result.error.message).toMatch(
      /^no valid structured answer after 2 attempts: the model sent arguments that do not match the schema:\n✖ Invalid input: expected int, received number\n {2}→ at population$/,
    );
    expect(server.hits).toBe(2);
  });

  it('answers malformed JSON arguments with the parse error', async () => {
    const { llm, server } = await modelFrom([answer('{"city": "Kyoto", "population": '), answer(kyoto)]);
    const result = await createChatCompletion({ llm, schema: city, prompt: 'Kyoto?' });
    expect(result).toEqual(ok(kyoto));
    const feedback = server.requests[1]?.messages.at(-1);
    expect(feedback).toMatchObject({ role: 'tool' });
    expect(feedback?.content).toMatch(/^Error: the arguments are not valid JSON \(.+\)\. Call create_chat_completion/);
  });

  it('says malformed JSON is why it failed when it never gets better', async () => {
    const { llm } = await modelFrom(() => answer('{not json'));
    const result = await createChatCompletion({ llm, schema: city, prompt: 'Kyoto?', maxAttempts: 1 });
    expect(result.isOk() || result.error.reason).toBe('malformed_arguments');
    expect(result.isOk() || result.error.message).toContain('not valid JSON');
    expect(result.isOk() || result.error.message).toContain('{not json');
  });

  it('asks again when the model answers in text instead of calling the tool', async () => {
    const { llm, server } = await modelFrom([{ content: 'About 1.46 million people.' }, answer(kyoto)]);
    const result = await createChatCompletion({ llm, schema: city, prompt: 'Kyoto?' });
    expect(result).toEqual(ok(kyoto));
    expect(server.requests[1]?.messages.slice(-2)).toEqual([
      { role: 'assistant', content: 'About 1.46 million people.' },
      { role: 'user', content: 'Give your answer by calling create_chat_completion: a text reply cannot be read.' },
    ]);
  });

  it('fails with no_tool_call when the model only ever answers in text', async () => {
    const { llm } = await modelFrom(() => ({ content: 'It is big.' }));
    const result = await createChatCompletion({ llm, schema: city, prompt: 'Kyoto?', maxAttempts: 2 });
    expect(result.isOk()).toBe(false);
    if (result.isOk()) return;
    expect(result.error.reason).toBe('no_tool_call');
    expect(result.error.message).toBe(
      'no valid structured answer after 2 attempts: the model answered in text instead of calling create_chat_completion: It is big.',
    );
  });

  it('asks for a non-object answer as { response } and returns the bare value', async () => {
    const { llm, server } = await modelFrom([answer({ response: ['Kinkaku-ji', 'Fushimi Inari'] })]);
    const result = await createChatCompletion({ llm, schema: z.array(z.string()).min(2), prompt: 'Two sights' });
    expect(result).toEqual(ok(['Kinkaku-ji', 'Fushimi Inari']));
    const tool = server.requests[0]?.tools?.[0] as { function: { parameters: unknown } };
    expect(tool.function.parameters).toMatchObject({
      properties: { response: { type: 'array', items: { type: 'string' }, minItems: 2 } },
      required: ['response'],
    });
  });

  it('answers every call of a turn on a retry, and takes a valid one among several', async () => {
    const { llm, server } = await modelFrom([
      {
        toolCalls: [
          { name: 'lookup', arguments: {} },
          { name: CHAT_COMPLETION_TOOL, arguments: { city: 'Kyoto' } },
        ],
      },
      {
        toolCalls: [
          { name: CHAT_COMPLETION_TOOL, arguments: { city: 1 } },
          { name: CHAT_COMPLETION_TOOL, arguments: kyoto },
        ],
      },
    ]);
    const result = await createChatCompletion({ llm, schema: city, prompt: 'Kyoto?' });
    expect(result).toEqual(ok(kyoto));
    const tools = server.requests[1]?.messages.filter((m) => m.role === 'tool') ?? [];
    expect(tools.map((m) => m.tool_call_id)).toEqual(['call_0_0', 'call_0_1']);
    expect(tools[0]?.content).toBe('Error: There is no tool lookup; call create_chat_completion.');
    expect(tools[1]?.content).toContain('→ at population');
  });

  it('reports a model that cannot be reached as llm_error without retrying it', async () => {
    const { llm, server } = await modelFrom([{ error: { status: 401, message: 'bad key' } }]);
    const result = await createChatCompletion({ llm, schema: city, prompt: 'Kyoto?' });
    expect(result.isOk()).toBe(false);
    if (result.isOk()) return;
    expect(result.error).toMatchObject({ reason: 'llm_error', attempts: 1, llmError: { kind: 'auth', status: 401 } });
    expect(result.error.message).toContain('bad key');
    expect(server.hits).toBe(1);
  });

  it('refuses a maxAttempts that is not a positive integer', async () => {
    const { llm } = await modelFrom([]);
    await expect(createChatCompletion({ llm, schema: city, prompt: 'x', maxAttempts: 0 })).rejects.toThrow(RangeError);
  });
});

describe('the create_chat_completion tool', () => {
  it("takes { response } by default and returns the response, as OpenManus's does for a string", async () => {
    const tool = createChatCompletionTool();
    expect(tool.spec).toMatchObject({
      name: 'create_chat_completion',
      parameters: { type: 'object', properties: { response: { type: 'string' } }, required: ['response'] },
    });
    expect(tool.spec.terminal).toBeUndefined();
    const session = toolSession(tool);
    expect(await session.call({ response: 'Kyoto has 1.46 million people.' })).toEqual({
      output: 'Kyoto has 1.46 million people.',
      isError: false,
    });
    const wrong = await session.call({ answer: 'x' });
    expect(wrong.isError).toBe(true);
    expect(wrong.output).toContain('→ at response');
  });

  it("ends an agent's run with the answer as JSON when terminal, over the real SDK", async () => {
    const { llm, server } = await modelFrom([
      answer({ city: 'Kyoto', population: 'unknown' }),
      { content: 'Corrected.', toolCalls: [{ name: CHAT_COMPLETION_TOOL, arguments: kyoto }] },
    ]);
    const agent = createAgent({
      name: 'census',
      tools: [createChatCompletionTool({ schema: city, terminal: true })],
      toolChoice: 'required',
    });
    const result = await run(agent, 'Kyoto?', { llm });
    expect(result).toMatchObject({ finishReason: 'terminated', answer: 'Corrected.' });
    expect(server.requests[1]?.messages.at(-1)?.content).toContain('expected number, received string');
    const last = result.state.messages.at(-1);
    expect(last).toMatchObject({ role: 'tool', name: 'create_chat_completion' });
    expect(JSON.parse(last?.content ?? '')).toEqual(kyoto);
  });
});
