// What the durable engine (@openmanus/durable: DBOS Transact on Postgres) costs: the time it adds
// per step (a run of N steps, an instant model and a no-op tool each step, on a worker, against
// core's plain `run` of the same agent in process), and runs per second with 2 worker processes
// against 1 (runs of 4 steps, 50 ms per model call). Needs Postgres (scripts/postgres.sh, Debian's
// postgresql); run after a build: `node bench/durable.mjs`.
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { run } from '@openmanus/core';
import { createDurableClient, generateDecisionKey } from '@openmanus/durable';
import { stepsAgent, stepsLlm } from './durable-agent.mjs';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const sh = promisify(execFile);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

/** A throwaway Postgres (scripts/postgres.sh); throws when it cannot start. */
async function startPostgres() {
  const dir = await mkdtemp(join(tmpdir(), 'openmanus-bench-pg-'));
  const port = await freePort();
  const script = here('../scripts/postgres.sh');
  try {
    await sh('bash', [script, 'start', dir, String(port)]);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(`Postgres could not start: ${(error.stderr || error.message).trim().split('\n').at(-1)}`);
  }
  // The cluster takes TCP logins with the password made at initdb: postgres.sh puts it in the URL.
  const { stdout } = await sh('bash', [script, 'url', dir, 'openmanus_bench']);
  return {
    url: stdout.trim(),
    stop: async () => {
      await sh('bash', [script, 'stop', dir]);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function startWorkers(databaseUrl, ids) {
  // Every worker of a database signs people's decisions with the same key.
  const decisionKey = generateDecisionKey();
  const workers = ids.map((id) =>
    spawn(process.execPath, ['--no-deprecation', here('./durable-worker.mjs')], {
      env: { ...process.env, DATABASE_URL: databaseUrl, WORKER_ID: id, DECISION_KEY: decisionKey },
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
  await Promise.all(workers.map((worker) => once(worker.stdout, 'data')));
  return {
    stop: () =>
      Promise.all(
        workers.map((worker) => {
          const exited = once(worker, 'exit');
          worker.kill('SIGTERM');
          return exited;
        }),
      ),
  };
}

/** ms from enqueueing to the outcome, of each of `runs` runs enqueued at once. */
async function timeRuns(client, agent, input, runs) {
  const started = performance.now();
  const ids = await Promise.all(Array.from({ length: runs }, () => client.enqueueRun({ agent, input })));
  const outcomes = await Promise.all(ids.map((id) => client.waitForRun(id)));
  const failed = outcomes.find((outcome) => outcome.answer !== 'done');
  if (failed) throw new Error(`a durable bench run did not finish: ${failed.finishReason} ${failed.error}`);
  return performance.now() - started;
}

const plainRun = async (steps) => {
  const started = performance.now();
  const outcome = await run(stepsAgent, `steps ${steps}`, { llm: stepsLlm() });
  if (outcome.answer !== 'done') throw new Error(`plain run: ${outcome.error}`);
  return performance.now() - started;
};

/**
 * { msPerStep, plainMsPerStep, runsPerSecond: { one, two } }. Per step: the difference between a
 * run of `long` and of `short` steps over the steps between, so the queue's pick-up time cancels.
 */
export async function durableCost({ short = 10, long = 60, reps = 3, runs = 40 } = {}) {
  const postgres = await startPostgres();
  let client;
  let workers;
  try {
    client = await createDurableClient({
      databaseUrl: postgres.url,
      applicationVersion: 'bench',
      pollingIntervalMs: 20,
    });
    workers = await startWorkers(postgres.url, ['bench-1']);
    const durableTimes = { short: [], long: [] };
    const plainTimes = { short: [], long: [] };
    await timeRuns(client, 'steps', `steps ${short}`, 1); // warm-up
    for (let i = 0; i < reps; i++) {
      for (const size of ['short', 'long']) {
        const steps = size === 'short' ? short : long;
        durableTimes[size].push(await timeRuns(client, 'steps', `steps ${steps}`, 1));
        plainTimes[size].push(await plainRun(steps));
      }
    }
    const perStep = (times) => (median(times.long) - median(times.short)) / (long - short);
    const oneWorker = await timeRuns(client, 'slow', 'steps 4', runs);
    await workers.stop();
    workers = await startWorkers(postgres.url, ['bench-1', 'bench-2']);
    const twoWorkers = await timeRuns(client, 'slow', 'steps 4', runs);
    return {
      msPerStep: perStep(durableTimes) - perStep(plainTimes),
      plainMsPerStep: perStep(plainTimes),
      runsPerSecond: { one: (runs * 1000) / oneWorker, two: (runs * 1000) / twoWorkers },
      runs,
    };
  } finally {
    await workers?.stop();
    await client?.close();
    await postgres.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { msPerStep, plainMsPerStep, runsPerSecond, runs } = await durableCost();
  console.log(`  added per step: ${msPerStep.toFixed(1)} ms (plain run: ${plainMsPerStep.toFixed(2)} ms per step)`);
  console.log(
    `  ${runs} runs of 4 steps, 50 ms per model call: 1 worker ${runsPerSecond.one.toFixed(1)} runs/s, 2 workers ${runsPerSecond.two.toFixed(1)} runs/s`,
  );
}
