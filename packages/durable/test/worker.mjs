// A worker process for the tests, serving test/agents.mjs's agents on the built package
// (`pnpm -C packages/durable build`), as a deployed worker would. HALT_AT_HANDOVER: the worker
// prints "handover" and stops still once a run's next part is enqueued, before the part that
// enqueued it has ended (DBOS's own debug point), for the test to kill it right there.
import { setDebugTrigger } from '@dbos-inc/dbos-sdk/internal/debugpoint';
import { createOpenAiLlm } from '@openmanus/core';
import { startWorker } from '@openmanus/durable';
import { testAgents } from './agents.mjs';
import { flowAgents } from './flowAgents.mjs';

const {
  DATABASE_URL,
  DECISION_KEY,
  WORKER_ID,
  LLM_URL,
  TOOL_LOG,
  CONCURRENCY,
  CONTINUE_EVERY,
  APP_VERSION,
  HALT_AT_HANDOVER,
  LLM_MODEL,
} = process.env;

if (HALT_AT_HANDOVER) {
  setDebugTrigger('DEBUG_TRIGGER_INITWF_COMMIT', {
    asyncCallback: () => {
      process.stdout.write('handover\n');
      return new Promise(() => {});
    },
  });
}

const model = LLM_MODEL ?? 'scripted-model';
const llm = createOpenAiLlm({ model, apiKey: 'test', baseURL: LLM_URL, maxRetries: 0 });
const parts = CONTINUE_EVERY ? { continueEvery: Number(CONTINUE_EVERY) } : {};
const agents = testAgents({ toolLog: TOOL_LOG, llm, workerId: WORKER_ID, ...parts });
const { researcher, writer } = flowAgents();
const worker = await startWorker({
  databaseUrl: DATABASE_URL,
  decisionKey: DECISION_KEY,
  workerId: WORKER_ID,
  applicationVersion: APP_VERSION ?? 'test-1',
  concurrency: Number(CONCURRENCY ?? 5),
  pollingIntervalMs: 100,
  reapIntervalMs: 200,
  agents: { ...agents, researcher: { agent: researcher, llm, ...parts }, writer: { agent: writer, llm, ...parts } },
  flows: {
    // Planning flows whose steps are runs of the agents above; the executors of `errands` call
    // tools, so a step's run takes more than one model turn (or holds until stopped).
    'day-trip': { agents: ['researcher', 'writer'], llm },
    'quick-trip': { agents: ['researcher', 'writer'], llm, timeoutMs: 8_000 },
    errands: { agents: ['researcher', 'recorder', 'holder'], llm },
    'quick-errands': { agents: ['researcher', 'recorder', 'holder'], llm, timeoutMs: 10_000 },
  },
});
process.stdout.write('ready\n');
process.on('SIGTERM', () => worker.stop().then(() => process.exit(0)));
