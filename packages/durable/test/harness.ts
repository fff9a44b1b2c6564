import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DBOSClient } from '@dbos-inc/dbos-sdk';
import { type OpenAiServer, type OpenAiServerOptions, startOpenAiServer } from '@openmanus/core/testing';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { createDurableClient, type DurableClient } from '../src/client.js';
import { generateDecisionKey } from '../src/decisions.js';
import { type Postgres, startPostgres } from './postgres.js';
import { spawnWorker, type WorkerEnv, type WorkerProcess } from './workers.js';

export { until } from './until.js';

/** How a test worker differs from the default: runs at once, parts' length, version, a halt at the handover, model. */
export interface TestWorkerOptions {
  readonly concurrency?: number;
  readonly continueEvery?: number;
  readonly applicationVersion?: string;
  readonly haltAtHandover?: boolean;
  /** The model the worker asks for (and prices its calls by); default `scripted-model`, which has no price. */
  readonly model?: string;
}

/** What one test file's tests share: a Postgres, worker processes, model servers, a client. */
export interface Harness {
  /** A fresh file for the workers' `record` tool to log its executions in. */
  toolLog(name: string): Promise<string>;
  /** The tool's executions as `runId effectId` pairs. */
  executions(file: string): Promise<string[]>;
  /** The log's lines as the tools wrote them: `runId effectId what workerId`. */
  lines(file: string): Promise<string[]>;
  server(options: OpenAiServerOptions): Promise<OpenAiServer>;
  worker(workerId: string, llmUrl: string, toolLog: string, options?: TestWorkerOptions): WorkerProcess;
  /** A client of the file's database (of `applicationVersion`, default test-1), with the workers' decision key. */
  client(applicationVersion?: string): Promise<DurableClient>;
  /** The file's database, for a test to reach it as something other than a client (an attacker). */
  readonly databaseUrl: () => string;
  /** The decision key the file's workers and `client()` share. */
  readonly decisionKey: string;
  /**
   * The workflows of a run as DBOS recorded them, first to last: each one's id, status, and the
   * keys of the run's steps it recorded (model, tool and context calls).
   */
  parts(runId: string): Promise<RunPartRecord[]>;
}

export interface RunPartRecord {
  readonly id: string;
  readonly status: string;
  readonly steps: readonly string[];
}

/** Registers the file's hooks; everything started is stopped (workers after each test). */
export function durableHarness(): Harness {
  let postgres: Postgres | undefined;
  let databaseUrl = '';
  let dir = '';
  const clients = new Map<string, DurableClient>();
  let dbos: DBOSClient | undefined;
  const workers: WorkerProcess[] = [];
  const servers: OpenAiServer[] = [];
  const decisionKey = generateDecisionKey();

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
    await Promise.all([...clients.values()].map((client) => client.close()));
    await dbos?.destroy();
    await Promise.all(servers.map((server) => server.close()));
    await postgres?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const lines = async (file: string) => (await readFile(file, 'utf8')).split('\n').filter(Boolean);
  return {
    toolLog: async (name) => {
      const file = join(dir, `${name}.log`);
      await writeFile(file, '');
      return file;
    },
    executions: async (file) => (await lines(file)).map((line) => line.split(' ').slice(0, 2).join(' ')),
    lines,
    server: async (options) => {
      const server = await startOpenAiServer(options);
      servers.push(server);
      return server;
    },
    worker: (workerId, llmUrl, toolLog, options = {}) => {
      const { concurrency = 5, continueEvery, applicationVersion, haltAtHandover, model } = options;
      const env: WorkerEnv = {
        DATABASE_URL: databaseUrl,
        DECISION_KEY: decisionKey,
        WORKER_ID: workerId,
        LLM_URL: llmUrl,
        TOOL_LOG: toolLog,
        CONCURRENCY: String(concurrency),
        ...(continueEvery ? { CONTINUE_EVERY: String(continueEvery) } : {}),
        ...(applicationVersion ? { APP_VERSION: applicationVersion } : {}),
        ...(haltAtHandover ? { HALT_AT_HANDOVER: '1' } : {}),
        ...(model ? { LLM_MODEL: model } : {}),
      };
      const worker = spawnWorker(env);
      workers.push(worker);
      return worker;
    },
    client: async (applicationVersion = 'test-1') => {
      const made =
        clients.get(applicationVersion) ??
        (await createDurableClient({ databaseUrl, applicationVersion, pollingIntervalMs: 100, decisionKey }));
      clients.set(applicationVersion, made);
      return made;
    },
    databaseUrl: () => databaseUrl,
    decisionKey,
    parts: async (runId) => {
      dbos ??= await DBOSClient.create({ systemDatabaseUrl: databaseUrl });
      const found = await dbos.listWorkflows({ workflow_id_prefix: runId, loadInput: false, loadOutput: false });
      const ofRun = found.filter((w) => w.workflowID === runId || w.workflowID.startsWith(`${runId}~`));
      return Promise.all(
        ofRun.map(async ({ workflowID, status }) => {
          const steps = (await dbos?.listWorkflowSteps(workflowID)) ?? [];
          // The run's own steps, not DBOS's (events, streams, messages, the next part's start).
          const keys = steps.map((step) => step.name).filter((name) => /^(llm|compact|running|context)-/.test(name));
          return { id: workflowID, status, steps: keys };
        }),
      );
    },
  };
}
