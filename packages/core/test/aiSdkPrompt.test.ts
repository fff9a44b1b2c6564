// A system message after the conversation started (an MCP server's instructions) reaches providers
// that take system messages only at the start as the user's text in its place.
import { afterEach, expect, it } from 'vitest';
import { systemMessage, userMessage } from '../src/kernel/messages.js';
import { toAiSdkPrompt } from '../src/llm/aiSdkPrompt.js';
import { createGoogleLlm } from '../src/llm/google.js';
import { ok } from '../src/result.js';
import { type GeminiServer, startGeminiServer } from '../src/testing/geminiServer.js';

let server: GeminiServer | undefined;
afterEach(() => server?.close());

it('a later system message goes as user text; the leading ones stay system', () => {
  const prompt = toAiSdkPrompt(
    [systemMessage('You are helpful.'), systemMessage('Be brief.'), userMessage('hi'), systemMessage('Server notes')],
    { vision: false, optionsKey: 'google', stableMessages: 0 },
  );
  expect(prompt.map((message) => message.role)).toEqual(['system', 'system', 'user', 'user']);
  expect(prompt[3]).toMatchObject({ role: 'user', content: [{ type: 'text', text: 'Server notes' }] });
});

it('Gemini gets a request with a later system message, instead of the SDK refusing it', async () => {
  server = await startGeminiServer({ script: [{ content: 'Noted.' }] });
  const llm = createGoogleLlm({ model: 'gemini-2.5-flash', apiKey: 'g', baseURL: server.baseURL, maxRetries: 0 });
  const result = await llm.complete({
    messages: [systemMessage('You are helpful.'), userMessage('hi'), systemMessage('Server notes')],
    tools: [],
    toolChoice: 'auto',
  });
  expect(result).toMatchObject(ok({ content: 'Noted.' }));
  expect(server.hits).toBe(1);
});
