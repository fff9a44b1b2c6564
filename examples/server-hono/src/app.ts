import { createAgent, defineTool, type LlmPort } from '@openmanus/core';
import { createServer } from '@openmanus/server';
import { Hono } from 'hono';

/** A tool with an effect on the world: the server pauses every call to it until someone approves. */
export const deploy = defineTool<{ service: string }>({
  name: 'deploy',
  description: 'Deploys a service to production.',
  parameters: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
  execute: ({ service }) => `deployed ${service}`,
});

/** Your Hono app, with agents under /agents (API, server-sent events and the studio). */
export async function buildApp(llm: LlmPort, dataDir: string) {
  // #region mount
  const server = await createServer({
    agents: { ops: createAgent({ name: 'ops', systemPrompt: 'You deploy services when asked.', tools: [deploy] }) },
    llm,
    approvals: ['deploy'],
    dataDir, // the token, runs.db and journal.db
  });
  const app = new Hono();
  app.get('/health', (c) => c.json({ ok: true })); // the app's own routes go on as before
  app.mount('/agents', server.fetch); // the server sees the paths under /agents
  // #endregion mount
  return { app, server };
}
