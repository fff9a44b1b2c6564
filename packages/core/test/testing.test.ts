import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { createAgent } from '../src/kernel/agent.js';
import { userMessage } from '../src/kernel/messages.js';
import { defaultPolicies } from '../src/kernel/policies.js';
import { createOpenAiLlm } from '../src/llm/openai.js';
import { run } from '../src/shell/run.js';
import { scriptedLlm } from '../src/testing/scriptedLlm.js';
import { startOpenAiServer } from '../src/testing/server.js';

describe('scriptedLlm', () => {
  it('answers in order, records requests and checks the script was consumed', async () => {
    const llm = scriptedLlm([
      { toolCalls: [{ name: 'missing', arguments: '{}' }] },
      (request) => ({ content: `saw ${request.messages.length} messages` }),
    ]);
    const agent = createAgent({ name: 'x' });
    expect(() => llm.assertConsumed()).toThrow('2 of 2 replies were never requested');
    const result = await run(agent, 'hi', { llm });
    expect(result.answer).toBe('saw 3 messages');
    expect(llm.requests).toHaveLength(2);
    expect(() => llm.assertConsumed()).not.toThrow();
  });

  it('reports an exhausted script as a failure of the run, not a hang', async () => {
    const result = await run(
      createAgent({ name: 'x', finishOnText: false, policies: defaultPolicies({ maxSteps: 5 }) }),
      'hi',
      {
        llm: scriptedLlm([{ content: 'a' }]),
      },
    );
    expect(result.status).toBe('failed');
    expect(result.error?.message).toMatch(/script is exhausted after 1 replies/);
  });
});

describe('startOpenAiServer', () => {
  it('speaks the chat-completions API on 127.0.0.1 and records every request', async () => {
    const server = await startOpenAiServer({
      script: [{ content: 'hello', usage: { inputTokens: 7, outputTokens: 1 } }],
    });
    try {
      expect(server.baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
      const client = new OpenAI({ apiKey: 'k', baseURL: server.baseURL, maxRetries: 0 });
      const models = await client.models.list();
      expect(models.data[0]?.id).toBe('scripted-model');
      const reply = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
      expect(reply.choices[0]?.message.content).toBe('hello');
      expect(reply.usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 1 });
      expect(server.requests[0]?.messages).toEqual([{ role: 'user', content: 'hi' }]);
      await expect(client.chat.completions.create({ model: 'm', messages: [] })).rejects.toThrow(
        /script is exhausted after 1 replies/,
      );
    } finally {
      await server.close();
    }
  });
});

describe('startOpenAiServer without keeping requests', () => {
  it('answers and counts every request but keeps none of them', async () => {
    const server = await startOpenAiServer({ keepRequests: false, script: () => ({ content: 'ok' }) });
    try {
      const llm = createOpenAiLlm({ model: 'm', apiKey: 'k', baseURL: server.baseURL, maxRetries: 0 });
      for (let i = 0; i < 3; i++) {
        const reply = await llm.complete({ messages: [userMessage(`call ${i}`)], tools: [], toolChoice: 'auto' });
        expect(reply.isOk() && reply.value.content).toBe('ok');
      }
      expect(server.hits).toBe(3);
      expect(server.requests).toEqual([]);
      expect(server.paths).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
