// A worker process for the tests: one `recorder` agent whose `record` tool appends its call's
// idempotency key (run id and effect id) to a file, so the test counts every execution. It runs
// the built package (`pnpm -C packages/durable build`), as a deployed worker would.
import { appendFile } from 'node:fs/promises';
import { askHuman, createAgent, createOpenAiLlm, defineTool } from '@openmanus/core';
import { startWorker } from '@openmanus/durable';
import { z } from 'zod';
import { flowAgents } from './flowAgents.mjs';

const { DATABASE_URL, WORKER_ID, LLM_URL, TOOL_LOG, CONCURRENCY } = process.env;

const record = defineTool({
  name: 'record',
  description: 'Records a note',
  parameters: z.object({ note: z.string() }),
  parallelSafe: true,
  execute: async ({ note }, scope) => {
    await appendFile(TOOL_LOG, `${scope.runId} ${scope.effectId} ${note}\n`);
    return `recorded ${note}`;
  },
});

// At most once: logs its start, then works until the run stops (the test kills its worker meanwhile).
const launch = defineTool({
  name: 'launch',
  description: 'Launches something that must not be launched twice',
  parameters: z.object({ what: z.string() }),
  atMostOnce: true,
  execute: async ({ what }, scope) => {
    await appendFile(TOOL_LOG, `${scope.runId} ${scope.effectId} ${what}\n`);
    await new Promise((resolve) => scope.signal.addEventListener('abort', resolve));
    return `launched ${what}`;
  },
});

const { researcher, writer } = flowAgents();
const llm = createOpenAiLlm({ model: 'scripted-model', apiKey: 'test', baseURL: LLM_URL, maxRetries: 0 });

const worker = await startWorker({
  databaseUrl: DATABASE_URL,
  workerId: WORKER_ID,
  applicationVersion: 'test-1',
  concurrency: Number(CONCURRENCY ?? 5),
  pollingIntervalMs: 100,
  reapIntervalMs: 200,
  agents: {
    recorder: { agent: createAgent({ name: 'recorder', tools: [record] }), llm },
    // Every `record` call waits for a person's approval.
    asker: { agent: createAgent({ name: 'asker', tools: [askHuman] }), llm },
    launcher: { agent: createAgent({ name: 'launcher', tools: [launch] }), llm },
    guarded: { agent: createAgent({ name: 'guarded', tools: [record] }), llm, approvals: { record: true } },
    researcher: { agent: researcher, llm },
    writer: { agent: writer, llm },
  },
  // A planning flow whose steps are runs of the agents above.
  flows: { 'day-trip': { agents: ['researcher', 'writer'], llm } },
});
process.stdout.write('ready\n');
process.on('SIGTERM', () => worker.stop().then(() => process.exit(0)));
