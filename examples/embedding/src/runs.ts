import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import {
  type Agent,
  type AgentEvent,
  type AgentState,
  type CheckpointStore,
  compactRunItem,
  createRunEmitter,
  type LlmPort,
  messageOf,
  type RunOptions,
  type RunOutcome,
  restore,
  resume,
  resumeWith,
  run,
} from '@openmanus/core';
import { pendingInputs } from '@openmanus/core/kernel';
import { z } from 'zod';

export interface RunsOptions {
  readonly agent: Agent;
  readonly llm: LlmPort;
  readonly store: CheckpointStore;
  /** The bearer token every request must carry (at least 16 characters). */
  readonly token: string;
  /** Where a run that stopped on an error is reported; default console.error. */
  readonly log?: (line: string) => void;
}

/** A leg of a run in this process: from its start or an approval to its next pause or its end. */
interface Leg {
  /** The leg's items so far, in their wire form: a late subscriber gets them all. */
  readonly items: object[];
  readonly listeners: Set<(item: object | undefined) => void>;
  state?: AgentState;
  ended: boolean;
  done?: Promise<void>;
}

const Task = z.object({ task: z.string().trim().min(1) });
const Decision = z.object({ effectId: z.string().min(1), reason: z.string().optional() });
/** How many ended legs are kept for clients that subscribe after a leg ended. */
const KEPT_LEGS = 100;

const json = (status: number, body: object) => Response.json(body, { status });
const notFound = (id: string) => json(404, { error: `no run ${id}` });
const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' };

/** A request's JSON body, or undefined when it has none (then the body check refuses it). */
export const jsonBody = (request: Request): Promise<unknown> => request.json().catch(() => undefined);

/**
 * The runs of one agent behind HTTP, for any framework: each handler takes plain data (an id,
 * a parsed body, the Authorization header) and answers with a web-standard Response.
 */
export function createRuns(options: RunsOptions) {
  const { agent, llm, store, token } = options;
  if (token.length < 16) throw new Error('the bearer token must be at least 16 characters');
  const log = options.log ?? ((line: string) => console.error(line));
  const legs = new Map<string, Leg>();

  async function load(id: string): Promise<AgentState | undefined> {
    const stored = await store.load(id);
    return stored && restore(stored.state);
  }

  const view = (id: string, state: AgentState) => ({
    id,
    status: state.status,
    answer: state.answer,
    error: state.error,
    step: state.step,
    usage: state.usage,
    pending: pendingInputs(agent.config, state).map((input) =>
      input.kind === 'approval'
        ? { kind: input.kind, effectId: input.effectId, tool: input.call.name, args: input.args }
        : { kind: input.kind, effectId: input.effectId, question: input.question },
    ),
  });

  /** Runs one leg in the background: every item goes to the leg's subscribers, every transition to the store. */
  function startLeg(id: string, go: (options: RunOptions) => Promise<RunOutcome>) {
    const leg: Leg = { items: [], listeners: new Set(), ended: false };
    const publish = (item: object | undefined) => {
      if (item) leg.items.push(item);
      for (const listener of leg.listeners) listener(item);
    };
    const emitter = createRunEmitter();
    for (const type of ['effect', 'observation', 'delta', 'result'] as const)
      emitter.on(type, (item) => publish(compactRunItem(item)));
    emitter.on('event', (item) => {
      leg.state = item.state;
      publish(compactRunItem(item));
    });
    legs.delete(id);
    legs.set(id, leg);
    for (const oldest of legs.keys()) if (legs.size > KEPT_LEGS && legs.get(oldest)?.ended) legs.delete(oldest);
    leg.done = go({ llm, store, runId: id, emitter })
      .then(() => undefined)
      .catch((error: unknown) => {
        log(`run ${id} stopped: ${messageOf(error)}`);
        publish({ type: 'stopped', error: messageOf(error) });
      })
      .finally(() => {
        leg.ended = true;
        publish(undefined);
      });
  }

  const live = (id: string) => legs.get(id)?.ended === false;

  /** The leg's items as server-sent events: those so far, then the rest as they come, until it pauses or ends. */
  function eventStream(leg: Leg): ReadableStream<Uint8Array> {
    const encoder = new TextEncoder();
    let listener: ((item: object | undefined) => void) | undefined;
    return new ReadableStream({
      start(controller) {
        const send = (item: object) => controller.enqueue(encoder.encode(`data: ${JSON.stringify(item)}\n\n`));
        for (const item of leg.items) send(item);
        if (leg.ended) return controller.close();
        listener = (item) => (item ? send(item) : controller.close());
        leg.listeners.add(listener);
      },
      cancel() {
        if (listener) leg.listeners.delete(listener);
      },
    });
  }

  return {
    /** Undefined when the header carries the token, else the 401 to answer with. */
    refusal(authorization: string | null | undefined): Response | undefined {
      const given = /^Bearer +(\S+)$/i.exec(authorization ?? '')?.[1];
      // Hashed first: equal lengths for timingSafeEqual, and neither the length nor the content leaks.
      const digest = (text: string) => createHash('sha256').update(text).digest();
      if (given && timingSafeEqual(digest(given), digest(token))) return undefined;
      return Response.json(
        { error: 'a valid bearer token is required' },
        { status: 401, headers: { 'www-authenticate': 'Bearer' } },
      );
    },

    /** POST /runs {task} → 202 {id}: the run goes on in the background. */
    start(body: unknown): Response {
      const parsed = Task.safeParse(body);
      if (!parsed.success) return json(400, { error: 'the body must be {"task": "..."}' });
      const id = randomUUID();
      startLeg(id, (o) => run(agent, parsed.data.task, o));
      return json(202, { id });
    },

    /** GET /runs/:id → the run: status, answer, error, pending approvals, usage. */
    async read(id: string): Promise<Response> {
      const state = legs.get(id)?.state ?? (await load(id));
      if (state) return json(200, view(id, state));
      return live(id) ? json(200, { id, status: 'idle', pending: [] }) : notFound(id);
    },

    /** POST /runs/:id/approve|reject {effectId, reason?} → 202, and the run goes on. */
    async decide(id: string, decision: 'approve' | 'reject', body: unknown): Promise<Response> {
      const parsed = Decision.safeParse(body);
      if (!parsed.success) return json(400, { error: 'the body must be {"effectId": "...", "reason"?: "..."}' });
      const { effectId, reason } = parsed.data;
      if (live(id)) return json(409, { error: `run ${id} is running; decide once it has paused` });
      const state = await load(id);
      if (!state) return notFound(id);
      // Checked again after the await: of two decisions arriving together, only one starts a leg.
      if (live(id)) return json(409, { error: `run ${id} is running; decide once it has paused` });
      const waiting = pendingInputs(agent.config, state).some((p) => p.kind === 'approval' && p.effectId === effectId);
      if (!waiting) return json(409, { error: `call ${effectId} is not waiting for approval` });
      const event: AgentEvent =
        decision === 'approve'
          ? { type: 'approvalGiven', effectId }
          : { type: 'approvalDenied', effectId, ...(reason ? { reason } : {}) };
      startLeg(id, (o) => resumeWith(agent, id, event, o));
      return json(202, { id });
    },

    /** GET /runs/:id/events → server-sent events: the current (or last) leg's run items. */
    async events(id: string): Promise<Response> {
      const leg = legs.get(id);
      if (leg) return new Response(eventStream(leg), { headers: SSE_HEADERS });
      // Not run by this process (it restarted): the run as stored, in one event.
      const state = await load(id);
      if (!state) return notFound(id);
      const stored: Leg = { items: [{ type: 'stored', run: view(id, state) }], listeners: new Set(), ended: true };
      return new Response(eventStream(stored), { headers: SSE_HEADERS });
    },

    /** After a restart: resumes the runs a crash interrupted (not those waiting for a person, nor ended ones). */
    async recover(): Promise<string[]> {
      const resumed: string[] = [];
      for (const id of await store.list()) {
        const state = await load(id).catch(() => undefined);
        if (!state || live(id) || !['awaiting_context', 'awaiting_llm', 'awaiting_tools'].includes(state.status))
          continue;
        startLeg(id, (o) => resume(agent, id, o));
        resumed.push(id);
      }
      return resumed;
    },

    /** Resolves once no run of this process is in flight (for tests and a graceful shutdown). */
    async idle(): Promise<void> {
      await Promise.all([...legs.values()].map((leg) => leg.done));
    },
  };
}

export type Runs = ReturnType<typeof createRuns>;
