import { serve } from '@hono/node-server';
import { createOpenAiLlm } from '@openmanus/core';
import { createSqliteStore } from '@openmanus/sqlite';
import { supportAgent } from './agent.js';
import { createExpressApp } from './express.js';
import { createFastifyApp } from './fastify.js';
import { createHonoApp } from './hono.js';
import { createRuns } from './runs.js';

// node dist/main.js fastify|hono|express, with AGENT_TOKEN and OPENAI_API_KEY set.
const framework = process.argv[2] ?? 'fastify';
const port = Number(process.env.PORT ?? 3000);
const runs = createRuns({
  agent: supportAgent,
  llm: createOpenAiLlm({
    model: process.env.OPENAI_MODEL ?? 'gpt-4o-mini',
    apiKey: process.env.OPENAI_API_KEY,
    stream: true,
  }),
  store: createSqliteStore(process.env.RUNS_DB ?? 'runs.db'),
  token: process.env.AGENT_TOKEN ?? '',
});
console.log(`resumed ${(await runs.recover()).length} interrupted runs`);
if (framework === 'fastify') await createFastifyApp(runs).listen({ port, host: '127.0.0.1' });
else if (framework === 'hono') serve({ fetch: createHonoApp(runs).fetch, port, hostname: '127.0.0.1' });
else if (framework === 'express') createExpressApp(runs).listen(port, '127.0.0.1');
else throw new Error(`unknown framework ${framework}: fastify, hono or express`);
console.log(`${framework} listening on http://127.0.0.1:${port}`);
