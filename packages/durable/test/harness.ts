import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type OpenAiServer, type OpenAiServerOptions, startOpenAiServer } from '@openmanus/core/testing';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { createDurableClient, type DurableClient } from '../src/index.js';
import { type Postgres, startPostgres } from './postgres.js';
import { spawnWorker, type WorkerProcess } from './workers.js';

/** What one test file's tests share: a Postgres, worker processes, model servers, a client. */
export interface Harness {
  /** A fresh file for the workers' `record` tool to log its executions in. */
  toolLog(name: string): Promise<string>;
  /** The tool's executions as `runId effectId` pairs. */
  executions(file: string): Promise<string[]>;
  server(options: OpenAiServerOptions): Promise<OpenAiServer>;
  worker(workerId: string, llmUrl: string, toolLog: string, concurrency?: number): WorkerProcess;
  client(): Promise<DurableClient>;
}

/** Registers the file's hooks; everything started is stopped (workers after each test). */
export function durableHarness(): Harness {
  let postgres: Postgres | undefined;
  let databaseUrl = '';
  let dir = '';
  let client: DurableClient | undefined;
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

  return {
    toolLog: async (name) => {
      const file = join(dir, `${name}.log`);
      await writeFile(file, '');
      return file;
    },
    executions: async (file) =>
      (await readFile(file, 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split(' ').slice(0, 2).join(' ')),
    server: async (options) => {
      const server = await startOpenAiServer(options);
      servers.push(server);
      return server;
    },
    worker: (workerId, llmUrl, toolLog, concurrency = 5) => {
      const worker = spawnWorker({
        DATABASE_URL: databaseUrl,
        WORKER_ID: workerId,
        LLM_URL: llmUrl,
        TOOL_LOG: toolLog,
        CONCURRENCY: String(concurrency),
      });
      workers.push(worker);
      return worker;
    },
    client: async () => {
      client ??= await createDurableClient({ databaseUrl, applicationVersion: 'test-1', pollingIntervalMs: 100 });
      return client;
    },
  };
}

/** Checks `condition` every 50 ms until it holds (state only Postgres knows: no event to await). */
export async function until<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
