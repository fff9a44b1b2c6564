import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
  type Agent,
  type AgentEvent,
  type AgentState,
  compactRunItem,
  createRunEmitter,
  isFinal,
  type LlmPort,
  pendingInputs,
  type RunItem,
  type RunOptions,
  resume,
  resumeWith,
  run,
} from '@openmanus/core';
import type { FileStore } from './store.js';

interface LiveRun {
  readonly controller: AbortController;
  /** This leg's items so far, replayed to clients that subscribe late. */
  readonly items: object[];
  readonly listeners: Set<(item: object) => void>;
  done: Promise<void>;
}

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

/**
 * An HTTP service around one agent: many concurrent runs, each checkpointed to the store after
 * every transition. Calls that need approval pause the run until a client decides.
 *   POST /runs {task}                       → 202 {id}
 *   GET  /runs/:id                          → the run's status, answer, pending approvals
 *   GET  /runs/:id/events                   → server-sent events until the run ends or pauses
 *   POST /runs/:id/approvals/:callId {approved, reason?}
 *   DELETE /runs/:id                        → cancel
 */
export function createAgentService(options: { agent: Agent; llm: LlmPort; store: FileStore }): {
  server: Server;
  /** Resumes runs a previous process left unfinished (not those waiting for a person). */
  recover: () => Promise<string[]>;
  /** Waits for every run in flight to end or pause. */
  idle: () => Promise<void>;
} {
  const { agent, llm, store } = options;
  const summary = summaryOf(agent);
  const live = new Map<string, LiveRun>();

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
    entry.done = go({ llm, signal: controller.signal, emitter, checkpoint: (state) => store.save(id, state) })
      .then(
        () => undefined,
        // The last checkpoint stays in the store; recover() picks the run up again.
        (error: unknown) =>
          console.error(`run ${id} stopped: ${error instanceof Error ? error.message : String(error)}`),
      )
      .finally(() => live.delete(id));
    live.set(id, entry);
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const [, resource, id, sub, callId] = url.pathname.split('/');
    if (resource !== 'runs') return send(res, 404, { error: 'not found' });

    if (req.method === 'POST' && !id) {
      const { task } = (await body(req)) as { task?: unknown };
      if (typeof task !== 'string' || !task.trim()) return send(res, 400, { error: 'body must be {"task": "..."}' });
      const runId = randomUUID();
      start(runId, (o) => run(agent, task, o));
      return send(res, 202, { id: runId });
    }
    const state = id ? await store.load(id) : undefined;
    if (req.method === 'GET' && sub === 'events' && id && (state || live.has(id))) return streamEvents(res, id, state);
    if (!id || !state) return send(res, 404, { error: `no run ${id}` });

    if (req.method === 'GET' && !sub) return send(res, 200, summary(id, state));
    if (req.method === 'DELETE' && !sub) {
      live.get(id)?.controller.abort('cancelled by the client');
      await live.get(id)?.done;
      return send(res, 200, summary(id, (await store.load(id)) ?? state));
    }
    if (req.method === 'POST' && sub === 'approvals' && callId) {
      if (live.has(id)) return send(res, 409, { error: 'the run is busy; decide once it is waiting' });
      const input = pendingInputs(agent.config, state).find((p) => p.kind === 'approval' && p.call.id === callId);
      if (!input) return send(res, 409, { error: `call ${callId} is not waiting for approval` });
      const { approved, reason } = (await body(req)) as { approved?: unknown; reason?: unknown };
      const { effectId } = input;
      const event: AgentEvent =
        approved === true
          ? { type: 'approvalGiven', effectId }
          : { type: 'approvalDenied', effectId, ...(typeof reason === 'string' ? { reason } : {}) };
      start(id, (o) => resumeWith(agent, state, event, o));
      return send(res, 202, { id });
    }
    return send(res, 405, { error: 'method not allowed' });
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
      const last = await store.load(id);
      if (last) write({ type: isFinal(last) ? 'ended' : 'paused', run: summary(id, last) });
      res.end();
    });
  }

  const server = createServer((req, res) => {
    route(req, res).catch((error: unknown) =>
      send(res, 500, { error: error instanceof Error ? error.message : String(error) }),
    );
  });

  return {
    server,
    recover: async () => {
      const resumed: string[] = [];
      for (const id of await store.ids()) {
        const state = await store.load(id);
        if (
          !state ||
          isFinal(state) ||
          live.has(id) ||
          state.status === 'awaiting_approval' ||
          state.status === 'awaiting_human'
        )
          continue;
        start(id, (o) => resume(agent, state, o));
        resumed.push(id);
      }
      return resumed;
    },
    idle: async () => {
      await Promise.all([...live.values()].map((r) => r.done));
    },
  };
}

function body(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk));
    req.on('end', () => {
      try {
        resolve(text ? JSON.parse(text) : {});
      } catch {
        reject(new Error('the body is not valid JSON'));
      }
    });
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, value: object) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}
