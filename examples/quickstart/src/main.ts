import { createOpenAiLlm, run } from '@openmanus/core';
import { startOpenAiServer } from '@openmanus/core/testing';
import { cityAgent } from './agent.js';

const question = process.argv.slice(2).join(' ') || 'Which has more people, Kyoto or Osaka?';

// Live with any OpenAI-compatible endpoint; otherwise a local server replays a recorded model.
const live = Boolean(process.env.OPENAI_API_KEY || process.env.OPENAI_BASE_URL);
const server = live
  ? undefined
  : await startOpenAiServer({
      script: [
        {
          toolCalls: [
            { name: 'lookup_population', arguments: { city: 'Kyoto' } },
            { name: 'lookup_population', arguments: { city: 'Osaka' } },
          ],
        },
        { content: 'Osaka has more people: 2,752,412 against 1,463,723 in Kyoto.' },
      ],
    });

const llm = createOpenAiLlm({
  model: process.env.OPENMANUS_MODEL ?? 'gpt-4o-mini',
  apiKey: process.env.OPENAI_API_KEY || 'offline',
  baseURL: server?.baseURL ?? (process.env.OPENAI_BASE_URL || undefined),
});
console.log(`[${live ? 'live' : 'offline, recorded model'}] ${question}`);
try {
  const result = await run(cityAgent, question, { llm });
  console.log(`${result.answer}\n(${result.finishReason}, ${result.usage.llmCalls} model calls)`);
  process.exitCode = result.status === 'finished' ? 0 : 1;
} finally {
  await server?.close();
}
