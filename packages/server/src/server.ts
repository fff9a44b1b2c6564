import { createServer as createHttpServer, type Server } from 'node:http';
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
import { type AccessPolicy, LOOPBACK_HOSTS, refusalOf } from '@openmanus/core/internal';
import { createSqliteStore } from '@openmanus/sqlite';
import { z } from 'zod';
import { accessRequestOf, resolveToken, type ServerToken } from './access.js';
import { readJson } from './body.js';
import type { RunJournal } from './journal.js';
import { type NodeListener, toNodeListener } from './node.js';
import type { QuarantinedRun } from './quarantine.js';
import { createRuns, type Principal, RequestRefusedError, RUNS_PAGE, type Runs, type TraceLeg } from './runs.js';
import { createSqliteJournal } from './sqliteJournal.js';
import { eventStream } from './sse.js';
import { loadStudio, PAGE_HEADERS } from './studioFiles.js';

/** Who a request comes from, as the host knows it: a user or tenant id (runs belong to it), or undefined to refuse. */
export type Authorize = (request: Request) => string | undefined | Promise<string | undefined>;

export interface ServerOptions {
  /** The agents served, by the name clients start runs with (`POST /runs {agent, task}`); the first is the default. */
  readonly agents: Readonly<Record<string, Agent>>;
  /** The model runs use. */
  readonly llm: LlmPort;
  /** Other models, by name, that the studio can fork a run onto. */
  readonly models?: Readonly<Record<string, LlmPort>>;
  /** Calls that wait for a client's approval: tool names, per tool `true` or a predicate on the arguments, or a function. */
  readonly approvals?: ApprovalRule;
  /**
   * The server's own files (keep it out of the agents' workspace): `token`, `runs.db` (the
   * default store), `journal.db` (what the studio shows), `quarantine/` (damaged runs).
   */
  readonly dataDir: string;
  /** Where runs are checkpointed; default a SQLite store in `<dataDir>/runs.db` (Postgres: `createPostgresStore` from `@openmanus/durable`). */
  readonly store?: CheckpointStore;
  /** Where runs' records and journals are kept; default SQLite in `<dataDir>/journal.db`. */
  readonly journal?: RunJournal;
  /** The bearer token clients must send; default the one kept in `<dataDir>/token`, made on first start. */
  readonly token?: string;
  /**
   * The host's own authentication instead of the token: given each request, the user or tenant
   * it comes from (runs are visible only to the one that started them), or undefined (401).
   */
  readonly authorize?: Authorize;
  /** `Host` values answered besides loopback ones (`127.0.0.1`, `localhost`, `[::1]` on any port): `name` or `name:port`. */
  readonly allowedHosts?: readonly string[];
  /** `Origin`s of other sites' pages allowed to talk to the server; default none. */
  readonly allowedOrigins?: readonly string[];
  /** How often a quiet event stream gets a comment line, so proxies keep it open; default 15 s. */
  readonly heartbeatMs?: number;
  /** Largest request body read; default 1 MiB. */
  readonly maxBodyBytes?: number;
  /** The path the server is mounted at, when the URLs it gets still carry it (a Next.js route, `app.all` in Hono). */
  readonly basePath?: string;
  /** Serve the studio at `<base>/studio/` (default true). */
  readonly studio?: boolean;
  /** Where the server reports what goes wrong (a run that stopped, a quarantined run); default stderr. */
  readonly log?: (line: string) => void;
  /**
   * Traces every leg of every run, e.g. `withTracing` from `@openmanus/tracing`; a run paused for an
   * approval or an answer and resumed later (after a restart too) stays one trace with a span for the wait.
   */
  readonly tracing?: TraceLeg;
  /** More options for every run (tool timeouts, a workspace). */
  readonly runOptions?: Omit<RunOptions, 'llm' | 'runId' | 'store' | 'signal' | 'emitter' | 'approvals'>;
}

export interface AgentServer {
  /** The web-standard handler: Hono (`app.mount`), Next.js route handlers, Bun, Deno, anything with `fetch`. */
  readonly fetch: (request: Request) => Promise<Response>;
  /** For `node:http` and Express (`app.use('/agents', server.nodeListener)`). */
  readonly nodeListener: NodeListener;
  /** The bearer token (absent with an `authorize` hook). */
  readonly token?: ServerToken;
  readonly runs: Runs;
  /** Listens on its own `node:http` server at `host` (default 127.0.0.1); resolves with the port. */
  listen(port?: number, host?: string): Promise<number>;
  /** Takes damaged runs out of the store, then resumes the unfinished rest (not those waiting for a person). */
  recover(): Promise<string[]>;
  quarantined(): readonly QuarantinedRun[];
  /** Waits for every run in flight to end or pause. */
  idle(): Promise<void>;
  /** Stops its own listener (runs in flight go on; wait with `idle` first) and closes the store and journal it made. */
  close(): Promise<void>;
}

const MIB = 1024 * 1024;

/**
 * The request bodies, and what to say when one is not what it should be. They are strict: a field
 * the server does not take (a replay's `model`: a replay calls no model) is refused, not dropped.
 */
const bodies = {
  task: [
    z.strictObject({ task: z.string().trim().min(1), agent: z.string().optional() }),
    '{"task": "...", "agent"?: "..."}',
  ],
  decision: [
    z.strictObject({ effectId: z.string().min(1), reason: z.string().optional() }),
    '{"effectId": "...", "reason"?: "..."}',
  ],
  message: [z.strictObject({ text: z.string().trim().min(1) }), '{"text": "..."}'],
  listQuery: [
    z.object({
      agent: z.string().min(1).optional(),
      status: z.string().min(1).optional(),
      q: z.string().min(1).max(1000).optional(),
      limit: z.coerce.number().int().min(1).max(RUNS_PAGE.max).optional(),
      offset: z.coerce.number().int().min(0).optional(),
    }),
    `of agent=, status=, q=, limit= (1 to ${RUNS_PAGE.max}) and offset= (from 0)`,
  ],
  none: [z.strictObject({}), '{}'],
  fork: [
    z.strictObject({
      transition: z.number().int().min(1),
      model: z.string().optional(),
      systemPrompt: z.string().max(100_000).optional(),
      tools: z.array(z.string()).max(1000).optional(),
    }),
    '{"transition": n, "model"?: "...", "systemPrompt"?: "...", "tools"?: ["..."]}',
  ],
  replay: [
    z.strictObject({
      agent: z.string().optional(),
      systemPrompt: z.string().max(100_000).optional(),
      tools: z.array(z.string()).max(1000).optional(),
    }),
    '{"agent"?: "...", "systemPrompt"?: "...", "tools"?: ["..."]}',
  ],
} as const;

function parsed<T>([schema, shape]: readonly [z.ZodType<T>, string], body: unknown, what = 'body'): T {
  const result = schema.safeParse(body);
  if (!result.success) throw new RequestRefusedError(400, `${what} must be ${shape}`);
  return result.data;
}

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers },
  });

const transitionNumber = (text: string | null | undefined) => {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1)
    throw new RequestRefusedError(400, `a transition is a whole number from 1, not ${text}`);
  return n;
};

/**
 * Agents over HTTP: many concurrent runs of many agents, each checkpointed to the store after
 * every transition and journaled for the studio; calls the approval rules gate pause the run
 * until a client decides. Every request needs an allowed `Host` and no foreign `Origin`; all but
 * the studio's files need the bearer token (or pass the host's `authorize` hook), and a POST a
 * JSON body of at most `maxBodyBytes`.
 */
export async function createServer(options: ServerOptions): Promise<AgentServer> {
  const { llm, dataDir } = options;
  if (Object.keys(options.agents).length === 0) throw new Error('createServer needs at least one agent in `agents`');
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  if (!(Number.isFinite(heartbeatMs) && heartbeatMs >= 10))
    throw new TypeError(`heartbeatMs must be a number of milliseconds of at least 10, not ${heartbeatMs}`);
  const token = options.authorize ? undefined : await resolveToken(dataDir, options.token);
  const ownStore = options.store ? undefined : createSqliteStore(join(dataDir, 'runs.db'));
  const store = options.store ?? (ownStore as CheckpointStore);
  const ownJournal = options.journal ? undefined : createSqliteJournal(join(dataDir, 'journal.db'));
  const journal = options.journal ?? (ownJournal as RunJournal);
  const log = options.log ?? ((line: string) => console.error(line));
  const maxBodyBytes = options.maxBodyBytes ?? MIB;
  const { approvals } = options;
  const agents = Object.fromEntries(
    Object.entries(options.agents).map(([name, agent]) => [name, approvals ? withApprovals(agent, approvals) : agent]),
  );
  const runs = createRuns({
    agents,
    llm,
    models: options.models ?? {},
    store,
    journal,
    owned: options.authorize !== undefined,
    dataDir,
    log,
    ...(options.runOptions ? { runOptions: options.runOptions } : {}),
    ...(options.tracing ? { tracing: options.tracing } : {}),
  });
  const studio = options.studio === false ? new Map() : await loadStudio();
  const policy: AccessPolicy = {
    ...(token ? { token: token.value } : {}),
    hosts: new Set([...LOOPBACK_HOSTS, ...(options.allowedHosts ?? []).map((host) => host.toLowerCase())]),
    origins: new Set(options.allowedOrigins ?? []),
  };
  const basePath = (options.basePath ?? '').replace(/\/+$/, '');

  /** Who asks: the hook's answer, or undefined when there is no hook (the token was checked). */
  async function principalOf(request: Request): Promise<Principal> {
    if (!options.authorize) return undefined;
    const who = await options.authorize(request);
    if (typeof who !== 'string' || who === '') throw new RequestRefusedError(401, 'not signed in');
    return who;
  }

  async function route(request: Request, path: string, who: Principal): Promise<Response> {
    const { method } = request;
    const url = new URL(request.url);
    const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
    const body = async <T>(kind: readonly [z.ZodType<T>, string]) =>
      parsed(kind, await readJson(request, maxBodyBytes));
    const [first, id, action, sub] = parts;
    if (first === 'agents' && parts.length === 1 && method === 'GET')
      return json({
        agents: Object.entries(agents).map(([name, agent]) => ({
          name,
          model: llm.model,
          tools: agent.config.tools.map((spec) => spec.name),
        })),
        models: Object.keys(options.models ?? {}),
      });
    if (first !== 'runs') throw new RequestRefusedError(404, 'not found');
    if (id === undefined) {
      if (method === 'GET') {
        const filter = parsed(bodies.listQuery, Object.fromEntries(url.searchParams), 'the query');
        return json(await runs.list(who, filter));
      }
      if (method === 'POST') {
        const { task, agent } = await body(bodies.task);
        return json({ id: runs.start(task, who, agent) }, 202);
      }
    }
    if (id !== undefined && method === 'GET') {
      if (action === undefined) return json(await runs.view(id, who));
      if (action === 'events' && !sub) return eventStream(runs, id, who, request, log, heartbeatMs);
      if (action === 'trace' && !sub) return json(await runs.trace(id, who));
      if (action === 'model-calls' && sub) return json(await runs.modelCall(id, who, sub));
      if (action === 'transitions' && sub) return json(await runs.transition(id, who, transitionNumber(sub)));
      if (action === 'diff' && !sub)
        return json(
          await runs.diff(
            id,
            who,
            transitionNumber(url.searchParams.get('from')),
            transitionNumber(url.searchParams.get('to')),
          ),
        );
    }
    if (id !== undefined && method === 'POST' && !sub) {
      switch (action) {
        case 'approve': {
          const { effectId } = await body(bodies.decision);
          await runs.decide(id, who, effectId, { approved: true });
          return json({ id }, 202);
        }
        case 'reject': {
          const { effectId, reason } = await body(bodies.decision);
          await runs.decide(id, who, effectId, { approved: false, ...(reason ? { reason } : {}) });
          return json({ id }, 202);
        }
        case 'cancel':
          await body(bodies.none);
          return json(await runs.cancel(id, who));
        case 'messages': {
          const { text } = await body(bodies.message);
          await runs.message(id, who, text);
          return json({ id }, 202);
        }
        case 'fork': {
          const { transition, model, systemPrompt, tools } = await body(bodies.fork);
          const forked = await runs.fork(id, who, {
            transition,
            ...(model !== undefined ? { model } : {}),
            ...(systemPrompt !== undefined ? { systemPrompt } : {}),
            ...(tools !== undefined ? { tools } : {}),
          });
          return json({ id: forked }, 202);
        }
        case 'replay': {
          const { agent, systemPrompt, tools } = await body(bodies.replay);
          return json(
            await runs.replay(id, who, {
              ...(agent !== undefined ? { agent } : {}),
              ...(systemPrompt !== undefined ? { systemPrompt } : {}),
              ...(tools !== undefined ? { tools } : {}),
            }),
          );
        }
      }
    }
    throw new RequestRefusedError(404, 'not found');
  }

  const studioFile = (path: string): Response | undefined => {
    // Relative, so it is right however the server is mounted (a prefix stripped or not).
    if (path === '/studio') return new Response(null, { status: 308, headers: { location: 'studio/' } });
    if (!path.startsWith('/studio/')) return undefined;
    const file = studio.get(path.slice('/studio/'.length) || 'index.html');
    if (!file) return json({ error: 'not found' }, 404);
    return new Response(file.body, { headers: { ...PAGE_HEADERS, 'content-type': file.type } });
  };

  async function fetch(request: Request): Promise<Response> {
    try {
      const { pathname } = new URL(request.url);
      const path = basePath && pathname.startsWith(basePath) ? pathname.slice(basePath.length) || '/' : pathname;
      const isStudio = path === '/studio' || path.startsWith('/studio/');
      const reading = request.method === 'GET' || request.method === 'HEAD';
      const refusal = refusalOf(accessRequestOf(request), policy, isStudio && reading);
      if (refusal) {
        // Before any of the body is read; none of it ever is.
        return json({ error: refusal.error }, refusal.status, { connection: 'close', ...refusal.headers });
      }
      if (isStudio)
        return reading
          ? (studioFile(path) ?? json({ error: 'not found' }, 404))
          : json({ error: 'the studio is files to read' }, 405, { allow: 'GET, HEAD' });
      return await route(request, path, await principalOf(request));
    } catch (error) {
      if (error instanceof RequestRefusedError)
        return json({ error: error.message }, error.status, error.status === 413 ? { connection: 'close' } : {});
      log(`${request.method} ${request.url} failed: ${messageOf(error)}`);
      return json({ error: messageOf(error) }, 500);
    }
  }

  const nodeListener = toNodeListener(fetch, { discardLimit: maxBodyBytes });
  let own: Server | undefined;
  return {
    fetch,
    nodeListener,
    ...(token ? { token } : {}),
    runs,
    listen: async (port = 0, host = '127.0.0.1') => {
      own = createHttpServer(nodeListener);
      const listening = own;
      await new Promise<void>((resolve, reject) => {
        listening.once('error', reject);
        listening.listen(port, host, () => resolve());
      });
      return (listening.address() as AddressInfo).port;
    },
    recover: () => runs.recover(),
    quarantined: () => runs.quarantined(),
    idle: () => runs.idle(),
    close: async () => {
      if (own) {
        const closing = own;
        await new Promise<void>((resolve) => {
          closing.close(() => resolve());
          closing.closeAllConnections();
        });
      }
      ownStore?.close();
      ownJournal?.close?.();
    },
  };
}
