// A worker process of the durable bench: `steps` (instant model) and `slow` (50 ms per model call).
import { startWorker } from '@openmanus/durable';
import { stepsAgent, stepsLlm } from './durable-agent.mjs';

const { DATABASE_URL, WORKER_ID, DECISION_KEY } = process.env;
const worker = await startWorker({
  databaseUrl: DATABASE_URL,
  workerId: WORKER_ID,
  decisionKey: DECISION_KEY,
  applicationVersion: 'bench',
  concurrency: 10,
  pollingIntervalMs: 50,
  agents: { steps: { agent: stepsAgent, llm: stepsLlm() }, slow: { agent: stepsAgent, llm: stepsLlm(50) } },
});
process.stdout.write('ready\n');
process.on('SIGTERM', () => worker.stop().then(() => process.exit(0)));
