import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type OpenAiServer, type RecordedRequest, startOpenAiServer } from '@openmanus/core/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDurableClient, type DurableClient } from '../src/index.js';
import { type Postgres, startPostgres } from './postgres.js';
import { noteReply, taskOf, turnsDone } from './scriptedNotes.js';
import { spawnWorker, type WorkerProcess } from './workers.js';

let postgres: Postgres;
let databaseUrl: string;
let dir: string;
let client: DurableClient;
const workers: WorkerProcess[] = [];
const servers: OpenAiServer[] = [];

beforeAll(async () => {
  postgres = await startPostgres();
  databaseUrl = postgres.url('openmanus_durable');
  dir = await mkdtemp(join(tmpdir(), 'openmanus-durable-'));
});

// A worker left running would take the next test's runs (with this test's model and log).
afterEach(async () => {
  for (const worker of workers) worker.child.kill('SIGKILL');
  await Promise.all(workers.splice(0).map((worker) => worker.exited));
});

afterAll(async () => {
  await client?.close();
  await Promise.all(servers.map((server) => server.close()));
  await postgres?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The executions the workers' `record` tool made, as `runId effectId note` lines. */
async function toolLog(file: string): Promise<string[]> {
  return (await readFile(file, 'utf8')).split('\n').filter(Boolean);
}

function start(workerId: string, llmUrl: string, toolLogFile: string, concurrency = 5): WorkerProcess {
  const worker = spawnWorker({
    DATABASE_URL: databaseUrl,
    WORKER_ID: workerId,
    LLM_URL: llmUrl,
    TOOL_LOG: toolLogFile,
    CONCURRENCY: String(concurrency),
  });
  workers.push(worker);
  return worker;
}

async function connect(): Promise<DurableClient> {
  client ??= await createDurableClient({ databaseUrl, applicationVersion: 'test-1' });
  return client;
}

describe('a worker killed in the middle of a run', () => {
  it('resumes on restart: completed steps replay from Postgres, only the interrupted LLM call is sent again', async () => {
    const log = join(dir, 'crash.log');
    await writeFile(log, '');
    let holding = true;
    let hold: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      hold = resolve;
    });
    const server = await startOpenAiServer({
      script: (request: RecordedRequest) => {
        const reply = noteReply(request, 3);
        // The third model call (after two recorded tool calls) never answers the first time.
        if (turnsDone(request) === 2 && holding) {
          holding = false;
          hold();
          return { ...reply, stallAfter: 0 };
        }
        return reply;
      },
    });
    servers.push(server);

    const first = start('crash-worker', server.baseURL, log);
    await first.ready;
    const durable = await connect();
    const runId = await durable.enqueueRun({ runId: 'crash-run', agent: 'recorder', input: 'record three notes' });
    await held;
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');

    expect(await toolLog(log)).toHaveLength(2);
    expect(await durable.getRun(runId)).toMatchObject({
      status: 'running',
      workerId: 'crash-worker',
      progress: { status: 'awaiting_llm', step: 3 },
    });

    const restarted = start('crash-worker', server.baseURL, log);
    await restarted.ready;
    const outcome = await durable.waitForRun(runId);

    expect(outcome).toMatchObject({ status: 'finished', answer: 'done', runId });
    expect(outcome.usage.llmCalls).toBe(4);
    const executions = await toolLog(log);
    expect(executions.map((line) => line.split(' ').slice(0, 2).join(' '))).toEqual([
      'crash-run running-1-0',
      'crash-run running-2-0',
      'crash-run running-3-0',
    ]);
    // Model calls by the turns done when sent: the interrupted third call twice, every other once.
    expect(server.requests.map(turnsDone)).toEqual([0, 1, 2, 2, 3]);
    expect(await durable.getRun(runId)).toMatchObject({ status: 'ended', workerId: 'crash-worker' });
  });
});

describe('two workers on one queue', () => {
  it('share the runs, and no step of any run is executed twice', async () => {
    const log = join(dir, 'shared.log');
    await writeFile(log, '');
    // Slow enough replies that one worker alone cannot drain the queue before the other polls.
    const server = await startOpenAiServer({
      script: (request: RecordedRequest) => ({ ...noteReply(request, 2), delayMs: 150 }),
    });
    servers.push(server);
    const one = start('worker-a', server.baseURL, log, 3);
    const two = start('worker-b', server.baseURL, log, 3);
    await Promise.all([one.ready, two.ready]);
    const durable = await connect();

    const runIds = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        durable.enqueueRun({ runId: `shared-${i}`, agent: 'recorder', input: `task shared-${i}` }),
      ),
    );
    const outcomes = await Promise.all(runIds.map((runId) => durable.waitForRun(runId)));

    expect(outcomes.map((outcome) => outcome.status)).toEqual(runIds.map(() => 'finished'));
    const executions = (await toolLog(log)).map((line) => line.split(' ').slice(0, 2).join(' '));
    expect(executions).toHaveLength(16);
    expect(new Set(executions).size).toBe(16);
    // Every run's model calls were sent once each: 2 tool turns and the answer.
    for (const runId of runIds) {
      expect(server.requests.filter((request) => taskOf(request) === `task ${runId}`).map(turnsDone)).toEqual([
        0, 1, 2,
      ]);
    }
    const ranOn = await Promise.all(
      runIds.map(async (runId) => (await durable.getRun(runId)) as { workerId?: string }),
    );
    expect(new Set(ranOn.map((info) => info.workerId))).toEqual(new Set(['worker-a', 'worker-b']));
  });
});
