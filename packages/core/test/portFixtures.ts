// What the LLM ports' tests ask their models, the same for every provider: the tools, the requests, an image, an agent.
import { z } from 'zod';
import { createAgent } from '../src/kernel/agent.js';
import type { LlmRequest } from '../src/kernel/effects.js';
import type { ImageData, Message } from '../src/kernel/messages.js';
import { defaultPolicies } from '../src/kernel/policies.js';
import type { ToolSpec } from '../src/kernel/tool.js';
import { defineTool } from '../src/tools/defineTool.js';

export const weather: ToolSpec = {
  name: 'get_weather',
  description: 'The weather in a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

export const clock: ToolSpec = {
  name: 'get_time',
  description: 'The local time in a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

/** A request of these messages, without tools unless `extra` gives some. */
export const ask = (messages: readonly Message[], extra: Partial<LlmRequest> = {}): LlmRequest => ({
  messages,
  tools: [],
  toolChoice: 'auto',
  ...extra,
});

/** The same after a short system prompt. */
export const askBriefly = (messages: readonly Message[], extra: Partial<LlmRequest> = {}): LlmRequest =>
  ask([{ role: 'system', content: 'Be brief.' }, ...messages], extra);

/** One question, after a short system prompt. */
export const question = (text: string): LlmRequest => askBriefly([{ role: 'user', content: text }]);

/** A 1×1 transparent PNG. */
export const PIXEL: ImageData = {
  mimeType: 'image/png',
  base64: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
};

/** A tool an agent runs: it adds two numbers. */
export const add = defineTool({
  name: 'add',
  description: 'Add two numbers',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => String(a + b),
});

/** An agent that adds with `add`. */
export const calculator = () =>
  createAgent({
    name: 'calc',
    systemPrompt: 'You add numbers.',
    tools: [add],
    policies: defaultPolicies({ maxSteps: 5 }),
  });
