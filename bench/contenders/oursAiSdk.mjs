// Our agent as `ours` runs it, its model reached through the AI SDK port: fromAiSdk over an
// @ai-sdk/openai-compatible model on the same server, so the port's own cost shows beside ours.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { fromAiSdk } from '@openmanus/core';
import { addArgs } from './ours.mjs';
import { oursWith } from './oursAgent.mjs';

export const entry = ['@openmanus/core', '@ai-sdk/openai-compatible'];

export const create = oursWith(addArgs, ({ model, baseURL, stream }) =>
  fromAiSdk(createOpenAICompatible({ name: 'bench', baseURL, apiKey: 'bench', includeUsage: true }).chatModel(model), {
    stream,
    maxRetries: 0,
  }),
);
