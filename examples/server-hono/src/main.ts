import { serve } from '@hono/node-server';
import { createOpenAiLlm } from '@openmanus/core';
import { scriptedLlm } from '@openmanus/core/testing';
import { buildApp } from './app.js';

// Live with OPENAI_API_KEY; offline, a scripted model that asks to deploy, then reports how it went.
const llm = process.env.OPENAI_API_KEY
  ? createOpenAiLlm({ model: process.env.OPENMANUS_MODEL ?? 'gpt-4o-mini', apiKey: process.env.OPENAI_API_KEY })
  : scriptedLlm((request) => {
      const last = request.messages.at(-1);
      return last?.role === 'tool'
        ? { content: `The deploy tool said: ${last.content}` }
        : { toolCalls: [{ name: 'deploy', arguments: { service: 'api' } }] };
    });

const { app, server } = await buildApp(llm, process.env.OPENMANUS_DATA ?? '.openmanus');
const http = serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000), hostname: '127.0.0.1' }, (info) =>
  console.log(`studio: http://127.0.0.1:${info.port}/agents/studio/#token=${server.token?.value}`),
);
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () =>
    http.close(async () => {
      await server.idle();
      await server.close();
    }),
  );
