// `npm i @openmanus/server @openmanus/core fastify`, then these lines: agents under /agents of a Fastify app.
import { createAgent } from '@openmanus/core';
import { scriptedLlm } from '@openmanus/core/testing';
import { createServer, fastifyPlugin } from '@openmanus/server';
import Fastify from 'fastify';

const server = await createServer({
  agents: { assistant: createAgent({ name: 'assistant' }) },
  llm: scriptedLlm([{ content: 'Hello from outside!' }]),
  dataDir: '.openmanus',
});
const app = Fastify();
await app.register(fastifyPlugin(server), { prefix: '/agents' });
const address = await app.listen({ port: 0, host: '127.0.0.1' });

// What a client does: start a run, follow its events to the end, read the answer.
const headers = { authorization: `Bearer ${server.token?.value}`, 'content-type': 'application/json' };
const started = await fetch(`${address}/agents/runs`, { method: 'POST', headers, body: '{"task":"Say hello"}' });
const { id } = (await started.json()) as { id: string };
const events = await (await fetch(`${address}/agents/runs/${id}/events`, { headers })).text();
const run = (await (await fetch(`${address}/agents/runs/${id}`, { headers })).json()) as {
  status: string;
  answer?: string;
};
const studio = await fetch(`${address}/agents/studio/`);
console.log(
  JSON.stringify({
    status: run.status,
    answer: run.answer,
    ended: events.includes('"type":"ended"'),
    studio: studio.status,
  }),
);
await server.idle();
await app.close();
await server.close();
