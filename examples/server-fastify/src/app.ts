import { createAgent, defineTool, type LlmPort } from '@openmanus/core';
import { createServer, fastifyPlugin } from '@openmanus/server';
import Fastify from 'fastify';

/** A tool with an effect on the world: the server pauses every call to it until someone approves. */
export const deploy = defineTool<{ service: string }>({
  name: 'deploy',
  description: 'Deploys a service to production.',
  parameters: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
  execute: ({ service }) => `deployed ${service}`,
});

/** Your Fastify app, with agents under /agents (API, server-sent events and the studio). */
export async function buildApp(llm: LlmPort, dataDir: string) {
  // #region mount
  const server = await createServer({
    agents: { ops: createAgent({ name: 'ops', systemPrompt: 'You deploy services when asked.', tools: [deploy] }) },
    llm,
    approvals: ['deploy'],
    dataDir, // the token, runs.db and journal.db
  });
  const app = Fastify();
  app.get('/health', async () => ({ ok: true })); // the app's own routes go on as before
  await app.register(fastifyPlugin(server), { prefix: '/agents' });
  app.addHook('onClose', async () => {
    await server.idle();
    await server.close();
  });
  // #endregion mount
  return { app, server };
}
