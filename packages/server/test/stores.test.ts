// The server over another process's state: a Postgres store two servers share, and a trace that
// survives a pause and a restart (the second server is a new process as far as the runs can tell:
// all it has is the store and the journal on disk).

import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createAgent, defineTool } from '@openmanus/core';
import { scriptedLlm } from '@openmanus/core/testing';
import { createPostgresStore } from '@openmanus/durable';
import { withTracing } from '@openmanus/tracing';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AgentServer, createServer, type ServerOptions } from '../src/index.js';

const TOKEN = 'test-token-0123456789abcdef';
const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys a service',
  parameters: z.object({ service: z.string() }),
  execute: async ({ service }) => `deployed ${service}`,
});
// One model for every server of a test: the run's second call is the script's second reply,
// whichever server makes it.
const script = () =>
  scriptedLlm([
    { toolCalls: [{ name: 'deploy', arguments: { service: 'api' } }] },
    { content: 'Deployed the api.' },
    { content: 'Deployed the worker too.' },
  ]);

async function tempDir() {
  const dir = await mkdtemp(join(tmpdir(), 'openmanus-server-stores-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function serve(options: Partial<ServerOptions> & Pick<ServerOptions, 'dataDir' | 'llm'>) {
  const server = await createServer({
    agents: { ops: createAgent({ name: 'ops', tools: [deploy] }) },
    approvals: ['deploy'],
    token: TOKEN,
    log: () => undefined,
    ...options,
  });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await server.idle();
    await server.close();
  };
  cleanups.push(close);
  return { server, close };
}

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read loosely, as a client would
type JsonObject = Record<string, any>;

const call = async (server: AgentServer, method: string, path: string, body?: object) => {
  const response = await server.fetch(
    new Request(`http://127.0.0.1${path}`, { method, headers: auth, ...(body ? { body: JSON.stringify(body) } : {}) }),
  );
  return { status: response.status, json: (await response.json()) as JsonObject };
};

/** Starts a run and waits for it to pause at the deploy; resolves with its id and the effect to decide. */
async function pausedRun(server: AgentServer) {
  const { json } = await call(server, 'POST', '/runs', { task: 'deploy the api' });
  await server.idle();
  const run = (await call(server, 'GET', `/runs/${json.id}`)).json;
  expect(run.status).toBe('awaiting_approval');
  return { id: json.id as string, effectId: run.pending[0].effectId as string };
}

describe('a server whose runs outlive it', () => {
  it('keeps a run paused for approval in one trace across a restart, with a span for the wait', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    cleanups.push(() => provider.shutdown());
    const tracer = provider.getTracer('test');
    const tracing: ServerOptions['tracing'] = (agent, options, link) =>
      withTracing(agent, options, { ...link, tracer });
    const dataDir = await tempDir();
    const llm = script();

    const first = await serve({ dataDir, llm, tracing });
    const { id, effectId } = await pausedRun(first.server);
    await first.close();

    const second = await serve({ dataDir, llm, tracing });
    expect((await call(second.server, 'POST', `/runs/${id}/approve`, { effectId })).status).toBe(202);
    await second.server.idle();
    expect((await call(second.server, 'GET', `/runs/${id}`)).json).toMatchObject({ status: 'finished' });

    const spans = exporter.getFinishedSpans();
    const runs = spans.filter((span) => span.name === 'invoke_agent ops');
    expect(runs).toHaveLength(2);
    const [paused, resumed] = runs;
    expect(resumed?.spanContext().traceId).toBe(paused?.spanContext().traceId);
    const wait = spans.find((span) => span.name === 'openmanus.wait');
    expect(wait?.spanContext().traceId).toBe(paused?.spanContext().traceId);
    expect(wait?.attributes).toMatchObject({ 'openmanus.wait.for': 'approval', 'openmanus.run.id': id });

    // The run ended: its record keeps no pause for a next task to continue.
    const again = await call(second.server, 'POST', `/runs/${id}/messages`, { text: 'and the worker too' });
    expect(again.status).toBe(202);
    await second.server.idle();
    const traces = new Set(
      exporter
        .getFinishedSpans()
        .filter((span) => span.name === 'invoke_agent ops')
        .map((span) => span.spanContext().traceId),
    );
    expect(traces.size).toBe(2);
  });

  describe('over a Postgres store', () => {
    let url: string;
    let stop: () => Promise<void>;
    beforeAll(async () => {
      ({ url, stop } = await startPostgres());
    }, 120_000);
    afterAll(async () => {
      await stop?.();
    });

    it('resumes a run another server paused, and two servers deciding at once record one decision', async () => {
      const store = createPostgresStore({ connectionString: url });
      cleanups.push(() => store.close());
      const llm = script();
      const a = await serve({ dataDir: await tempDir(), llm, store });
      const { id, effectId } = await pausedRun(a.server);

      // Another server: its own process state and journal, the same runs.
      const otherStore = createPostgresStore({ connectionString: url });
      cleanups.push(() => otherStore.close());
      const b = await serve({ dataDir: await tempDir(), llm, store: otherStore });
      expect((await call(b.server, 'GET', `/runs/${id}`)).json).toMatchObject({ status: 'awaiting_approval' });
      const listed = (await call(b.server, 'GET', '/runs')).json.runs as { id: string }[];
      expect(listed.map((run) => run.id)).toContain(id);

      const decisions = await Promise.all([
        call(a.server, 'POST', `/runs/${id}/approve`, { effectId }),
        call(b.server, 'POST', `/runs/${id}/reject`, { effectId, reason: 'not today' }),
      ]);
      expect(decisions.map((d) => d.status).sort()).toEqual([202, 409]);
      await Promise.all([a.server.idle(), b.server.idle()]);
      const approved = decisions[0].status === 202;
      const end = (await call(b.server, 'GET', `/runs/${id}`)).json;
      expect(end.status).toBe('finished');
      const ran = JSON.stringify(end.timeline).includes('deployed api');
      expect(ran).toBe(approved);
    });
  });
});

const script_ = fileURLToPath(new URL('../../../scripts/postgres.sh', import.meta.url));
const exec = promisify(execFile);

/** A throwaway cluster (scripts/postgres.sh: 127.0.0.1, its own port and password); throws when it cannot start. */
async function startPostgres(): Promise<{ url: string; stop: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'openmanus-pg-'));
  const port = await new Promise<number>((resolve, reject) => {
    const probe = createNetServer().once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
  try {
    const url = (await exec('bash', [script_, 'start', dir, String(port)])).stdout.trim();
    return {
      url,
      stop: async () => {
        await exec('bash', [script_, 'stop', dir]);
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(`could not start Postgres: ${(error as { stderr?: string }).stderr ?? error}`);
  }
}
