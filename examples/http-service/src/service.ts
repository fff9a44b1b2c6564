import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import {
  type Agent,
  type AgentEvent,
  type AgentState,
  CheckpointConflictError,
  type CheckpointStore,
  compactRunItem,
  createFileStore,
  createRunEmitter,
  isFinal,
  type LlmPort,
  pendingInputs,
  type RunItem,
  type RunOptions,
  restore,
  resume,
  run,
  step,
} from '@openmanus/core';
import { type AccessPolicy, loopbackHosts, refusalOf, resolveToken, type ServiceToken } from './access.js';
import { HttpError, readJson, refuse, send } from './http.js';
import { type QuarantinedRun, quarantine } from './quarantine.js';

export interface ServiceOptions {
  readonly agent: Agent;
  readonly llm: LlmPort;
  /**
   * The service's own files (keep it out of the agent's workspace): `token`, `runs/` (the
   * checkpoint store), `quarantine/` (damaged runs), `started/` (markers of calls that must not
   * be re-run blindly).
   */
  readonly dataDir: string;
  /** Where runs are checkpointed; default core's file store in `<dataDir>/runs`. */
  readonly store?: CheckpointStore;
  /** The bearer token clients must send; default the one kept in `<dataDir>/token`, made on first start. */
  readonly token?: string;
  /** `Host` header values answered (with the port); default 127.0.0.1, localhost and [::1] on the listening port. */
  readonly allowedHosts?: readonly string[];
  /** `Origin` header values accepted; default none: no web page may talk to the service. */
  readonly allowedOrigins?: readonly string[];
  /** Largest request body read; default 1 MiB. */
  readonly maxBodyBytes?: number;
  /** Where the service reports what goes wrong (a run that stopped, a quarantined file); default stderr. */
  readonly log?: (line: string) => void;
}

export interface AgentService {
  readonly server: Server;
  readonly token: ServiceToken;
  /** Quarantines runs whose saved state cannot be read, then resumes the unfinished rest (not those waiting for a person). */
  recover(): Promise<string[]>;
  /** The runs `recover` found damaged and moved aside. */
  quarantined(): readonly QuarantinedRun[];
  /** Waits for every run in flight to end or pause. */
  idle(): Promise<void>;
}

interface LiveRun {
  readonly controller: AbortController;
  /** This leg's items so far, replayed to clients that subscribe late. */
  readonly items: object[];
  readonly listeners: Set<(item: object) => void>;
  done: Promise<void>;
}

interface Stored {
  readonly state: AgentState;
  readonly version: number;
}

const MIB = 1024 * 1024;
const CANCEL_REASON = 'cancelled by the client';

const summaryOf = (agent: Agent) => (id: string, state: AgentState) => ({
  id,
  status: state.status,
  step: state.step,
  finishReason: state.finishReason,
  answer: state.answer,
  error: state.error,
  pending: pendingInputs(agent.config, state)
    .filter((p) => p.kind === 'approval')
    .map((p) => ({ callId: p.call.id, tool: p.call.name, args: p.kind === 'approval' ? p.args : undefined })),
});

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

const decodePart = (part: string) => {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new HttpError(400, `malformed path segment ${part}`);
  }
};

const asObject = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/**
 * An HTTP service around one agent: many concurrent runs, each checkpointed to the store after
 * every transition. Calls that need approval pause the run until a client decides. Every
 * request needs `Authorization: Bearer <token>`, one of the allowed `Host`s, no foreign
 * `Origin`, and (for POST) a JSON body of at most `maxBodyBytes`.
 *   GET  /runs                              → every run's id and status, and the quarantined ones
 *   POST /runs {task}                       → 202 {id}
 *   GET  /runs/:id                          → the run's status, answer, pending approvals
 *   GET  /runs/:id/events                   → server-sent events until the run ends or pauses
 *   POST /runs/:id/approvals/:callId {approved, reason?}   → 202, or 409 once the call is decided
 *   DELETE /runs/:id                        → cancel, running or paused
 */
export async function createAgentService(options: ServiceOptions): Promise<AgentService> {
  const { llm, dataDir } = options;
  const runsDir = join(dataDir, 'runs');
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const store = options.store ?? createFileStore(runsDir);
  const token = await resolveToken(dataDir, options.token);
  const log = options.log ?? ((line: string) => console.error(line));
  const maxBodyBytes = options.maxBodyBytes ?? MIB;
  const { agent } = options;
  const stepOf = agent.step ?? step;
  const summary = summaryOf(agent);
  const live = new Map<string, LiveRun>();
  const quarantined: QuarantinedRun[] = [];

  /** The run as stored, checked whole (migrated if older); undefined when there is none. */
  async function load(id: string): Promise<Stored | undefined> {
    try {
      const stored = await store.load(id);
      return stored && { state: await restore(stored.state), version: stored.version };
    } catch (error) {
      throw new Error(`the saved state of run ${id} cannot be read: ${messageOf(error)}`);
    }
  }

  /** Records a decision taken on `stored`, unless the run changed since it was read (then false). */
  async function decide(id: string, stored: Stored, event: AgentEvent): Promise<AgentState | undefined> {
    const [next] = stepOf(agent.config, stored.state, event);
    try {
      await store.save(id, next, stored.version);
      return next;
    } catch (error) {
      if (error instanceof CheckpointConflictError) return undefined;
      throw error;
    }
  }

  function start(id: string, go: (runOptions: RunOptions) => Promise<unknown>) {
    const entry: LiveRun = {
      controller: new AbortController(),
      items: [],
      listeners: new Set(),
      done: Promise.resolve(),
    };
    const emitter = createRunEmitter();
    for (const type of ['effect', 'event', 'observation', 'result'] as const) {
      emitter.on(type, (item: RunItem) => {
        const wire = compactRunItem(item);
        entry.items.push(wire);
        for (const listener of entry.listeners) listener(wire);
      });
    }
    const { controller } = entry;
    // The store saves every transition, each expecting the version before it: a decision
    // recorded meanwhile by another request makes this leg stop rather than overwrite it.
    entry.done = go({ llm, runId: id, store, signal: controller.signal, emitter })
      .then(() => undefined)
      // The last checkpoint stays in the store; recover() picks the run up again.
      .catch((error: unknown) => log(`run ${id} stopped: ${messageOf(error)}`))
      .finally(() => {
        if (live.get(id) === entry) live.delete(id);
      });
    live.set(id, entry);
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://service');
    const [, resource, id, sub, callId, ...rest] = url.pathname.split('/').map(decodePart);
    if (resource !== 'runs' || rest.length > 0) return send(res, 404, { error: 'not found' });

    if (!id) {
      if (req.method === 'GET') return send(res, 200, await listing());
      if (req.method !== 'POST') return send(res, 405, { error: 'method not allowed' });
      const { task } = asObject(await readJson(req, maxBodyBytes));
      if (typeof task !== 'string' || !task.trim()) return send(res, 400, { error: 'body must be {"task": "..."}' });
      const runId = randomUUID();
      start(runId, (o) => run(agent, task, o));
      return send(res, 202, { id: runId });
    }

    if (req.method === 'POST' && sub === 'approvals' && callId) {
      const { approved, reason } = asObject(await readJson(req, maxBodyBytes));
      if (typeof approved !== 'boolean')
        return send(res, 400, { error: 'body must be {"approved": true or false, "reason"?: "..."}' });
      const stored = await load(id);
      if (!stored) return send(res, 404, { error: `no run ${id}` });
      if (live.has(id)) return send(res, 409, { error: 'the run is busy; decide once it is waiting' });
      const input = pendingInputs(agent.config, stored.state).find(
        (p) => p.kind === 'approval' && p.call.id === callId,
      );
      if (!input) return send(res, 409, { error: `call ${callId} is not waiting for approval` });
      const { effectId } = input;
      const event: AgentEvent = approved
        ? { type: 'approvalGiven', effectId }
        : { type: 'approvalDenied', effectId, ...(typeof reason === 'string' ? { reason } : {}) };
      // Compare-and-set: of two decisions read at the same version, only the first is saved.
      if (!(await decide(id, stored, event)))
        return send(res, 409, { error: `call ${callId} was decided by another request` });
      // From the store, so that the run goes on from exactly what was recorded.
      start(id, (o) => resume(agent, id, o));
      return send(res, 202, { id });
    }

    if (req.method === 'DELETE' && !sub) return cancel(res, id);

    const stored = await load(id);
    if (req.method === 'GET' && sub === 'events' && (stored || live.has(id)))
      return streamEvents(res, id, stored?.state);
    if (!stored) return send(res, 404, { error: `no run ${id}` });
    if (req.method === 'GET' && !sub) return send(res, 200, summary(id, stored.state));
    return send(res, 405, { error: 'method not allowed' });
  }

  /** A running run is stopped; a paused or unfinished one is recorded as cancelled (compare-and-set). */
  async function cancel(res: ServerResponse, id: string): Promise<void> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const entry = live.get(id);
      if (entry) {
        entry.controller.abort(CANCEL_REASON);
        await entry.done;
        continue;
      }
      const stored = await load(id);
      if (!stored) return send(res, 404, { error: `no run ${id}` });
      if (isFinal(stored.state)) return send(res, 200, summary(id, stored.state));
      if (live.has(id)) continue;
      const cancelled = await decide(id, stored, { type: 'cancelled', reason: CANCEL_REASON });
      if (!cancelled) continue;
      return send(res, 200, summary(id, cancelled));
    }
    return send(res, 409, { error: `run ${id} kept changing; try again` });
  }

  async function listing() {
    const runs = await Promise.all(
      (await store.list()).map(async (id) => {
        try {
          const stored = await load(id);
          return { id, status: stored?.state.status ?? 'starting' };
        } catch (error) {
          return { id, status: 'unreadable', error: messageOf(error) };
        }
      }),
    );
    return { runs, quarantined };
  }

  /** Live items while the run goes; a finished or paused run gets its summary and the stream ends. */
  function streamEvents(res: ServerResponse, id: string, state: AgentState | undefined) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const write = (value: object) => res.write(`data: ${JSON.stringify(value)}\n\n`);
    const entry = live.get(id);
    if (!entry) {
      if (state) write({ type: isFinal(state) ? 'ended' : 'paused', run: summary(id, state) });
      res.end();
      return;
    }
    for (const item of entry.items) write(item);
    const listener = (item: object) => write(item);
    entry.listeners.add(listener);
    res.on('close', () => entry.listeners.delete(listener));
    void entry.done.then(async () => {
      const last = await load(id).catch(() => undefined);
      if (last) write({ type: isFinal(last.state) ? 'ended' : 'paused', run: summary(id, last.state) });
      res.end();
    });
  }

  const server = createServer((req, res) => {
    const refusal = refusalOf(req, policy);
    if (refusal) return refuse(req, res, refusal.status, refusal.error, maxBodyBytes, refusal.headers);
    route(req, res).catch((error: unknown) => {
      if (error instanceof HttpError) return refuse(req, res, error.status, error.message, maxBodyBytes);
      log(`${req.method} ${req.url} failed: ${messageOf(error)}`);
      send(res, 500, { error: messageOf(error) });
    });
  });

  const configuredHosts = options.allowedHosts && new Set(options.allowedHosts.map((h) => h.toLowerCase()));
  let defaultHosts: { port: number; hosts: ReadonlySet<string> } | undefined;
  const policy: AccessPolicy = {
    token: token.value,
    hosts: () => {
      if (configuredHosts) return configuredHosts;
      const { port } = server.address() as AddressInfo;
      if (defaultHosts?.port !== port) defaultHosts = { port, hosts: new Set(loopbackHosts(port)) };
      return defaultHosts.hosts;
    },
    origins: new Set(options.allowedOrigins ?? []),
  };

  return {
    server,
    token,
    recover: async () => {
      const resumed: string[] = [];
      for (const id of await store.list()) {
        if (live.has(id)) continue;
        let state: AgentState;
        try {
          const stored = await load(id);
          // Core's store writes a run's first line whole (renamed into place): a listed file without one was cut short.
          if (!stored) throw new Error(`the file of run ${id} holds no complete state`);
          state = stored.state;
        } catch (error) {
          const moved = await quarantine(runsDir, join(dataDir, 'quarantine'), id, messageOf(error));
          quarantined.push(moved);
          log(`run ${id} quarantined${moved.file ? ` to ${moved.file}` : ''}: ${moved.reason}`);
          continue;
        }
        if (live.has(id) || state.status === 'awaiting_approval' || state.status === 'awaiting_human') continue;
        if (isFinal(state)) continue;
        start(id, (o) => resume(agent, id, o));
        resumed.push(id);
      }
      return resumed;
    },
    quarantined: () => quarantined,
    idle: async () => {
      await Promise.all([...live.values()].map((r) => r.done));
    },
  };
}
