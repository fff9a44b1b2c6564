// The server as a process of its own, for the tests that kill it (restart.test.ts transpiles and
// runs this file with the package's sources): a `deploy` tool that needs approval and must not be
// re-run blindly, and a `note` tool that needs neither. Arguments: data dir, model base URL, log
// of what the tools did, token. DEPLOY_HANGS=1: a deploy never ends. Runs are kept in SQLite
// (the server's default).
import { appendFile } from 'node:fs/promises';
import { createAgent, createOpenAiLlm, defineTool, terminate } from '@openmanus/core';
import { z } from 'zod';
import { createServer } from '../src/index.js';

const [dataDir = '', baseURL = '', deployLog = '', token = ''] = process.argv.slice(2);

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys the site.',
  parameters: z.object({ target: z.string() }),
  atMostOnce: true,
  execute: async ({ target }, scope) => {
    // The idempotency key core gives every call: the run and the call's effect id.
    await appendFile(deployLog, `${scope.runId}/${scope.effectId} ${target}\n`);
    if (process.env.DEPLOY_HANGS) await new Promise(() => undefined);
    return `deployed to ${target}`;
  },
});

const note = defineTool({
  name: 'note',
  description: 'Writes a note down.',
  parameters: z.object({ text: z.string() }),
  execute: async ({ text }) => {
    await appendFile(deployLog, `note ${text}\n`);
    return `noted: ${text}`;
  },
});

const server = await createServer({
  agents: { deployer: createAgent({ name: 'Deployer', tools: [deploy, note, terminate] }) },
  llm: createOpenAiLlm({ model: 'm', apiKey: 'k', baseURL, maxRetries: 0 }),
  approvals: ['deploy'],
  dataDir,
  token,
});
const port = await server.listen(0);
const resumed = await server.recover();
console.log(JSON.stringify({ port, resumed }));
