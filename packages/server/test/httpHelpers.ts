// Real HTTP against createServer on 127.0.0.1: a scripted OpenAI-compatible model, a client with
// the token, and requests with exactly the headers a hostile page or client could send.
import { mkdtemp, realpath } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Agent, type CheckpointStore, createManus, createOpenAiLlm } from '@openmanus/core';
import { type OpenAiServer, type RecordedRequest, type ScriptEntry, startOpenAiServer } from '@openmanus/core/testing';
import { afterEach } from 'vitest';
import { type AgentServer, createServer, type ServerOptions } from '../src/index.js';

export const TOKEN = 'test-token-0123456789abcdef';

export const tempDir = async () => realpath(await mkdtemp(join(tmpdir(), 'openmanus-server-')));

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
/** Runs after the current test, newest first. */
export const onCleanup = (cleanup: () => Promise<void>) => void cleanups.push(cleanup);

export const finish = (text: string) => ({
  content: text,
  toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }],
});

export interface Raw {
  readonly status: number;
  readonly text: string;
  readonly json: Record<string, unknown>;
}

export interface RawRequest {
  readonly method: string;
  readonly path: string;
  readonly headers?: Record<string, string>;
  /** Sent whole (with its Content-Length), or in chunks (chunked, no length). */
  readonly body?: string | Buffer | readonly Buffer[];
}

/**
 * One request on a connection of its own, with exactly the headers given (Host included): what
 * a browser page, a DNS-rebound one or a hostile client could send. Resolves with the answer
 * even when the server cuts the upload short after answering.
 */
export function raw(port: number, options: RawRequest): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      method: options.method,
      path: options.path,
      headers: options.headers ?? {},
      agent: false,
      setHost: false,
    });
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        let json: Record<string, unknown> = {};
        try {
          json = JSON.parse(text) as Record<string, unknown>;
        } catch {}
        resolve({ status: res.statusCode ?? 0, text, json });
      });
      res.on('error', reject);
    });
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    const { body } = options;
    if (Array.isArray(body)) {
      for (const chunk of body) req.write(chunk);
      req.end();
    } else {
      req.end(body as string | Buffer | undefined);
    }
  });
}

/** A server-sent event's data. */
export interface WireItem {
  readonly type: string;
  readonly run?: Record<string, unknown> & { readonly pending?: readonly Record<string, unknown>[] };
  readonly event?: { readonly type: string };
}

/** Checks `condition` until it holds (the test's own timeout bounds the wait). */
export async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await sleep(25);
}

/** A legitimate client of the server at `base`, with its token. */
export function client(base: string, token: string) {
  const auth = { authorization: `Bearer ${token}` };
  /** A well-formed request. */
  const call = async (method: string, path: string, body?: object) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...auth, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };
  /** Reads the server-sent events of a run until the server ends the stream. */
  const events = async (id: string) => {
    const text = await (await fetch(`${base}/runs/${id}/events`, { headers: auth })).text();
    return text
      .split('\n\n')
      .flatMap((block) => block.split('\n').filter((line) => line.startsWith('data: ')))
      .map((line) => JSON.parse(line.slice(6)) as WireItem);
  };
  /** Approves (or rejects) the pending call `callId` by the effect id the run lists for it. */
  const decide = async (id: string, callId: string, approved = true, reason?: string) => {
    const pending = (await call('GET', `/runs/${id}`)).json.pending as { callId: string; effectId: string }[];
    const effectId = pending.find((p) => p.callId === callId)?.effectId ?? callId;
    return call('POST', `/runs/${id}/${approved ? 'approve' : 'reject'}`, { effectId, ...(reason ? { reason } : {}) });
  };
  /** The runs listed, each as id, status and task. */
  const listed = async () => {
    const { runs, quarantined } = (await call('GET', '/runs')).json as {
      runs: { id: string; status: string; task?: string }[];
      quarantined: { id: string; reason: string; file?: string }[];
    };
    return { runs: runs.map(({ id, status, task }) => ({ id, status, task })), quarantined };
  };
  return { auth, call, events, decide, listed };
}

export interface SetupOptions {
  /** The test's directory: `workspace/` for the agent, `server/` for the server's data. */
  readonly dir?: string;
  readonly store?: CheckpointStore;
  readonly agent?: (workspace: string) => Agent;
  readonly server?: Partial<ServerOptions>;
  /** The port to listen on; default a free one. */
  readonly port?: number;
}

/** Manus (python_execute needs approval) served on a fresh (or given) data dir, behind the scripted model. */
export async function setup(script: ScriptEntry<RecordedRequest>[], options: SetupOptions = {}) {
  const model: OpenAiServer = await startOpenAiServer({ script });
  const dir = options.dir ?? (await tempDir());
  const workspace = join(dir, 'workspace');
  const dataDir = join(dir, 'server');
  const logs: string[] = [];
  const server: AgentServer = await createServer({
    agents: { manus: options.agent?.(workspace) ?? createManus({ workspace }) },
    approvals: ['python_execute'],
    llm: createOpenAiLlm({ model: 'm', apiKey: 'k', baseURL: model.baseURL, maxRetries: 0 }),
    dataDir,
    token: TOKEN,
    log: (line) => logs.push(line),
    ...(options.store ? { store: options.store } : {}),
    ...options.server,
  });
  const port = await server.listen(options.port ?? 0);
  const base = `http://127.0.0.1:${port}`;
  onCleanup(async () => {
    await server.idle();
    await server.close();
    await model.close();
  });
  const { auth, call, events, decide, listed } = client(base, TOKEN);
  /** The headers a legitimate client sends, to change one at a time. */
  const headers = (more: Record<string, string> = {}): Record<string, string> => ({
    host: `127.0.0.1:${port}`,
    ...auth,
    'content-type': 'application/json',
    ...more,
  });
  return { model, server, dir, dataDir, workspace, port, base, call, events, decide, listed, headers, logs };
}
