// A worker running the counter agent on the database until it is killed. It stops (for good) at
// the call that bumps `name`: while the call runs (`running`: prints "running <name>"), or once
// its result is saved (`saved`: prints "saved <name>").
import { createOpenAiLlm, run } from '@openmanus/core';
import { createSqliteStore } from '../../src/sqliteStore.js';
import { counterAgent } from './counterAgent.js';

const [file = '', baseURL = '', log = '', runId = '', stopWhen = '', name = '', atMostOnce] = process.argv.slice(2);

/** Never settles, and keeps the process alive until it is killed. */
const stop = (line: string) => {
  console.log(line);
  return new Promise<never>(() => setInterval(() => undefined, 60_000));
};

const agent = counterAgent(log, {
  atMostOnce: atMostOnce === 'at-most-once',
  whileRunning: async (bumped) => {
    if (stopWhen === 'running' && bumped === name) await stop(`running ${name}`);
  },
});
await run(agent, 'bump a, b and c', {
  llm: createOpenAiLlm({ model: 'scripted-model', apiKey: 'unused', baseURL, maxRetries: 0 }),
  store: createSqliteStore(file),
  runId,
  checkpoint: async (state) => {
    const saved = state.messages.some((m) => m.role === 'tool' && m.content === `bumped ${name}`);
    if (stopWhen === 'saved' && saved) await stop(`saved ${name}`);
  },
});
console.log('the run ended before it was stopped');
