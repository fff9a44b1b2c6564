import { mkdir, readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import {
  type Agent,
  type ApprovalRule,
  type CheckpointStore,
  type LlmPort,
  messageOf,
  type RunOptions,
  withApprovals,
} from '@openmanus/core';
import { createSqliteStore } from '@openmanus/sqlite';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { z } from 'zod';
import { type AccessPolicy, loopbackHosts, refusalOf, resolveToken, type ServiceToken } from './access.js';
import { discardRest, sseEvent } from './http.js';
import type { QuarantinedRun } from './quarantine.js';
import { createRuns, RequestRefusedError, type Runs } from './runs.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The page's own files: served without the token (they hold no secret and do nothing). */
    open?: boolean;
  }
}

export interface ServiceOptions {
  readonly agent: Agent;
  readonly llm: LlmPort;
  /** Calls that wait for a client's approval: tool names, per tool `true` or a predicate on the arguments, or a function. */
  readonly approvals?: ApprovalRule;
  /**
   * The service's own files (keep it out of the agent's workspace): `token`, `runs.db` (the
   * SQLite store of the runs), `quarantine/` (damaged runs taken out of the store).
   */
  readonly dataDir: string;
  /** Where runs are checkpointed; default a SQLite store in `<dataDir>/runs.db`. */
  readonly store?: CheckpointStore;
  /** The bearer token clients must send; default the one kept in `<dataDir>/token`, made on first start. */
  readonly token?: string;
  /** `Host` header values answered (with the port) besides 127.0.0.1, localhost and [::1] on the listening port. */
  readonly allowedHosts?: readonly string[];
  /** `Origin`s of other sites' pages allowed to talk to the service (with the token); default none. */
  readonly allowedOrigins?: readonly string[];
  /** Largest request body read; default 1 MiB. */
  readonly maxBodyBytes?: number;
  /** Where the service reports what goes wrong (a run that stopped, a quarantined run); default stderr. */
  readonly log?: (line: string) => void;
  /** More options for every run (tool timeouts, parallelism). */
  readonly runOptions?: Omit<RunOptions, 'llm' | 'runId' | 'store' | 'signal' | 'emitter' | 'approvals'>;
}

export interface AgentService {
  readonly token: ServiceToken;
  readonly runs: Runs;
  /** Listens on `host` (default 127.0.0.1) and resolves with the port. */
  listen(port?: number, host?: string): Promise<number>;
  /** Takes damaged runs out of the store, then resumes the unfinished rest (not those waiting for a person). */
  recover(): Promise<string[]>;
  /** The runs `recover` found damaged and took out of the store. */
  quarantined(): readonly QuarantinedRun[];
  /** Waits for every run in flight to end or pause. */
  idle(): Promise<void>;
  /** Closes the connections and the server (runs in flight go on; wait with `idle` first), and a store it made. */
  close(): Promise<void>;
}

const MIB = 1024 * 1024;

/** The request bodies, and what to say when one is not what it should be. */
const bodies = {
  task: [z.object({ task: z.string().trim().min(1) }), '{"task": "..."}'],
  decision: [
    z.object({ effectId: z.string().min(1), reason: z.string().optional() }),
    '{"effectId": "...", "reason"?: "..."}',
  ],
  message: [z.object({ text: z.string().trim().min(1) }), '{"text": "..."}'],
  none: [z.object({}), '{}'],
} as const;

function parsed<T>([schema, shape]: readonly [z.ZodType<T>, string], body: unknown): T {
  const result = schema.safeParse(body);
  if (!result.success) throw new RequestRefusedError(400, `body must be ${shape}`);
  return result.data;
}

const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;

/** The page: a document and its module and style, with headers that keep other sites out of it. */
const PAGE_FILES = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/app.js': ['app.js', 'text/javascript; charset=utf-8'],
  '/style.css': ['style.css', 'text/css; charset=utf-8'],
} as const;

const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

/**
 * An HTTP service around one agent (Fastify): many concurrent runs, each checkpointed to the
 * store after every transition; calls the approval rules gate pause the run until a client
 * decides. Every request needs one of the allowed `Host`s and no foreign `Origin`; all but the
 * page's files need `Authorization: Bearer <token>`, and a POST a JSON body of at most `maxBodyBytes`.
 *   GET  /                            → the page that starts and watches runs
 *   GET  /runs                        → every run's id, status and task, and the quarantined ones
 *   POST /runs {task}                 → 202 {id}
 *   GET  /runs/:id                    → the run: status, timeline, plan, pending calls, answer
 *   GET  /runs/:id/events             → server-sent events until the run ends or pauses
 *   POST /runs/:id/approve {effectId} → 202, or 409 once the call is decided
 *   POST /runs/:id/reject {effectId, reason?}
 *   POST /runs/:id/cancel {}          → the run, cancelled (running or paused)
 *   POST /runs/:id/messages {text}    → 202: the next task of an ended run, or the answer to its question
 */
export async function createAgentService(options: ServiceOptions): Promise<AgentService> {
  const { llm, dataDir } = options;
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const token = await resolveToken(dataDir, options.token);
  const ownStore = options.store ? undefined : createSqliteStore(join(dataDir, 'runs.db'));
  const store = options.store ?? (ownStore as CheckpointStore);
  const log = options.log ?? ((line: string) => console.error(line));
  const maxBodyBytes = options.maxBodyBytes ?? MIB;
  const agent = options.approvals ? withApprovals(options.agent, options.approvals) : options.agent;
  const runs = createRuns({
    agent,
    llm,
    store,
    dataDir,
    log,
    ...(options.runOptions ? { runOptions: options.runOptions } : {}),
  });
  const page = await Promise.all(
    Object.entries(PAGE_FILES).map(async ([path, [file, type]]) => ({
      path,
      type,
      body: await readFile(new URL(`../page/${file}`, import.meta.url)),
    })),
  );

  const app = Fastify({ bodyLimit: maxBodyBytes, forceCloseConnections: true, logger: false });

  const moreHosts = (options.allowedHosts ?? []).map((h) => h.toLowerCase());
  let hosts: { port: number; hosts: ReadonlySet<string> } | undefined;
  const policy: AccessPolicy = {
    token: token.value,
    hosts: () => {
      const { port } = app.server.address() as AddressInfo;
      if (hosts?.port !== port) hosts = { port, hosts: new Set([...loopbackHosts(port), ...moreHosts]) };
      return hosts.hosts;
    },
    origins: new Set(options.allowedOrigins ?? []),
  };

  const refuse = (request: FastifyRequest, reply: FastifyReply, status: number, error: string) => {
    discardRest(request.raw, maxBodyBytes);
    return reply.code(status).header('connection', 'close').send({ error });
  };

  // Before any of the body is read.
  app.addHook('onRequest', async (request, reply) => {
    const refusal = refusalOf(request.raw, policy, request.routeOptions.config.open === true);
    if (!refusal) return;
    if (refusal.headers) reply.headers(refusal.headers);
    return refuse(request, reply, refusal.status, refusal.error);
  });
  app.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
    if (error instanceof RequestRefusedError) return reply.code(error.status).send({ error: error.message });
    const status = error.statusCode ?? 500;
    if (status === 413) return refuse(request, reply, 413, `the body is larger than ${maxBodyBytes} bytes`);
    if (status >= 500) log(`${request.method} ${request.url} failed: ${error.message}`);
    return reply.code(status).send({ error: error.message });
  });
  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ error: 'not found' }));

  for (const { path, type, body } of page)
    app.get(path, { config: { open: true } }, (_request, reply) => reply.headers(PAGE_HEADERS).type(type).send(body));

  app.get('/runs', () => runs.list());
  app.post('/runs', async (request, reply) => {
    const { task } = parsed(bodies.task, request.body);
    return reply.code(202).send({ id: runs.start(task) });
  });
  app.get('/runs/:id', (request) => runs.view(idOf(request)));
  app.post('/runs/:id/approve', async (request, reply) => {
    const { effectId } = parsed(bodies.decision, request.body);
    await runs.decide(idOf(request), effectId, { approved: true });
    return reply.code(202).send({ id: idOf(request) });
  });
  app.post('/runs/:id/reject', async (request, reply) => {
    const { effectId, reason } = parsed(bodies.decision, request.body);
    await runs.decide(idOf(request), effectId, { approved: false, ...(reason ? { reason } : {}) });
    return reply.code(202).send({ id: idOf(request) });
  });
  app.post('/runs/:id/cancel', async (request) => {
    parsed(bodies.none, request.body);
    return runs.cancel(idOf(request));
  });
  app.post('/runs/:id/messages', async (request, reply) => {
    const { text } = parsed(bodies.message, request.body);
    await runs.message(idOf(request), text);
    return reply.code(202).send({ id: idOf(request) });
  });
  app.get('/runs/:id/events', async (request, reply) => {
    const id = idOf(request);
    await runs.view(id); // 404 while an answer can still say so
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
    });
    const lastEventId = request.headers['last-event-id'];
    const unsubscribe = await runs
      .subscribe(
        id,
        { send: (message) => res.write(sseEvent(message)), end: () => res.end() },
        typeof lastEventId === 'string' ? lastEventId : undefined,
      )
      .catch((error: unknown) => {
        log(`events of run ${id}: ${messageOf(error)}`);
        res.end();
        return () => undefined;
      });
    res.on('close', unsubscribe);
  });

  await app.ready();
  return {
    token,
    runs,
    listen: async (port = 0, host = '127.0.0.1') => {
      await app.listen({ port, host });
      return (app.server.address() as AddressInfo).port;
    },
    recover: () => runs.recover(),
    quarantined: () => runs.quarantined(),
    idle: () => runs.idle(),
    close: async () => {
      await app.close();
      ownStore?.close();
    },
  };
}
