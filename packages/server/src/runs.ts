import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import {
  type Agent,
  type AgentEvent,
  type AgentState,
  CheckpointConflictError,
  type CheckpointStore,
  costOf,
  createAgent,
  hasErrorCode,
  isFinal,
  type LlmPort,
  messageOf,
  OpenManusError,
  type RunItem,
  type RunOptions,
  restore,
  stream,
  streamResume,
} from '@openmanus/core';
import { initialState, pendingInputs, step } from '@openmanus/core/kernel';
import type { Plan } from '@openmanus/flow';
import type { RunJournal, RunRecord, TraceLink } from './journal.js';
import { type QuarantinedRun, quarantine } from './quarantine.js';
import { legRecorder } from './recorder.js';
import { jsonDiff, requestOf, stateAt } from './states.js';
import { type AgentChanges, replayRun, variantOf } from './timeTravel.js';
import { runTrace } from './trace.js';
import { planOf, type RunView, runView, type UsageView, usageView, wireItem } from './view.js';

/** A request the server cannot take, with the HTTP status that says why. */
export class RequestRefusedError extends OpenManusError<'REQUEST_REFUSED'> {
  static readonly codes = ['REQUEST_REFUSED'] as const;
  override readonly name = 'RequestRefusedError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super('REQUEST_REFUSED', message);
  }
  static override isInstance(value: unknown): value is RequestRefusedError {
    return hasErrorCode(value, RequestRefusedError.codes);
  }
}

/** One server-sent event: its id (to resume from with `Last-Event-ID`) and its JSON data. */
export interface RunMessage {
  readonly id?: string;
  readonly data: object;
}

export interface Subscriber {
  send(message: RunMessage): void;
  end(): void;
}

/** Who asks, as the host's `authorize` hook said (undefined: the server has no hook, everyone with the token sees all). */
export type Principal = string | undefined;

export interface RunsOptions {
  /** The agents by name, with the server's approval rules applied. */
  readonly agents: Readonly<Record<string, Agent>>;
  readonly llm: LlmPort;
  /** Other models a run may be forked onto, by name. */
  readonly models: Readonly<Record<string, LlmPort>>;
  readonly store: CheckpointStore;
  readonly journal: RunJournal;
  /** Runs belong to whom the `authorize` hook names: each request sees only its principal's. */
  readonly owned: boolean;
  /** Where damaged runs are written when taken out of the store. */
  readonly dataDir: string;
  readonly log: (line: string) => void;
  /** More options for every leg of every run (tool timeouts, a workspace). */
  readonly runOptions?: Omit<RunOptions, 'llm' | 'runId' | 'store' | 'signal' | 'emitter'>;
  readonly tracing?: TraceLeg;
}

/**
 * Traces one leg of a run: given the leg's options, the same options traced. `withTracing` from
 * `@openmanus/tracing` is one; `link` carries the trace across a pause (`onPause` is kept with
 * the run, `continues` is what the last pause left), so a run approved hours later, by another
 * process included, stays one trace with a span for the wait.
 */
export type TraceLeg = (agent: Agent, options: RunOptions, link: LegTraceLink) => RunOptions;

export interface LegTraceLink {
  readonly onPause: (link: TraceLink) => void;
  readonly continues?: TraceLink;
}

/** A leg of a run in flight: from a start, an answer or a resume to its end or next pause. */
interface LiveRun {
  readonly controller: AbortController;
  /** Names the leg in event ids, so a client resuming from another leg gets a fresh snapshot. */
  readonly leg: string;
  readonly messages: RunMessage[];
  readonly subscribers: Set<Subscriber>;
  /** The state after the last event (none before the first). */
  state?: AgentState;
  plan?: Plan | undefined;
  done: Promise<void>;
}

interface Stored {
  readonly state: AgentState;
  readonly version: number;
}

export type Decision = { readonly approved: true } | { readonly approved: false; readonly reason?: string };

/** A run in the runs list: what it is and what it cost. */
export interface RunSummary {
  readonly id: string;
  readonly agent: string;
  readonly status: AgentState['status'] | 'starting' | 'unreadable';
  readonly task?: string;
  /** The id of the model it was started with (unknown for a run this server did not start). */
  readonly model?: string;
  readonly step: number;
  readonly transitions: number;
  readonly usage?: UsageView;
  /** The share of input tokens the provider's prompt cache served (null before the first call). */
  readonly cachedShare: number | null;
  readonly costUsd: number | null;
  readonly startedAt: string | null;
  readonly updatedAt: string | null;
  readonly durationMs: number | null;
  readonly forkedFrom?: RunRecord['forkedFrom'];
  readonly error?: string;
}

export interface RunFilter {
  readonly agent?: string;
  readonly status?: string;
  /** Text the task contains (case-insensitive). */
  readonly q?: string;
  /** How many runs to list (default 50, at most 200). */
  readonly limit?: number;
  /** How many of the matching runs, newest first, to skip: the `next` of the page before. */
  readonly offset?: number;
}

/** A page of the runs list: `next` is the offset of the following page, when there may be one. */
export interface RunsPage {
  readonly runs: readonly RunSummary[];
  readonly next?: number;
  readonly quarantined: readonly QuarantinedRun[];
}

export const RUNS_PAGE = { default: 50, max: 200 } as const;
/** How many runs' states are read at once while a page is filled. */
const SUMMARY_BATCH = 25;

export interface ForkRequest extends AgentChanges {
  /** The transition whose state the new run starts from (1 is the first). */
  readonly transition: number;
  /** Another model by its name in the server's `models`. */
  readonly model?: string;
}

const CANCEL_REASON = 'cancelled by the client';
/** How many runs' ended legs are kept for late subscribers (the most recent ones). */
const ENDED_LEGS_KEPT = 100;

/** How a leg's stream ends: the run finished, or it waits for someone. */
const endingOf = (state: AgentState) => (isFinal(state) ? 'ended' : 'paused');

const iso = (at: number | undefined) => (at === undefined ? null : new Date(at).toISOString());

/**
 * The runs of the server's agents: started, answered, cancelled, continued, watched, forked;
 * every transition saved in the store and journaled, every decision a compare-and-set on the
 * stored version.
 */
export function createRuns(options: RunsOptions) {
  const { agents, llm, models, store, journal, log } = options;
  const live = new Map<string, LiveRun>();
  // The latest runs' last legs, once ended: a client that subscribes as a fast leg ends (a page
  // that asks for a run's events just after starting it) still gets the leg's messages.
  const ended = new Map<string, LiveRun>();
  const quarantined: QuarantinedRun[] = [];
  const defaultAgent = Object.keys(agents)[0];

  /** The agent a run runs on: its record's agent with the changes it was forked with. */
  function agentOf(record: RunRecord | undefined): { name: string; agent: Agent } {
    const name = record?.agent ?? defaultAgent ?? '';
    const agent = agents[name];
    if (!agent) throw new RequestRefusedError(409, `the run's agent ${name} is not served here`);
    return { name, agent: record ? variantOf(agent, record) : agent };
  }
  const llmOf = (record: RunRecord | undefined) => (record?.model && models[record.model]) || llm;
  /**
   * The agent to read run `id` with: its own, or when this server does not serve it (a studio over
   * another app's store) a bare one of that name, enough to show the run but not to go on with it.
   */
  function readerOf(id: string): { name: string; agent: Agent } {
    const record = journal.record(id);
    const name = record?.agent ?? defaultAgent ?? '';
    const served = agents[name];
    return { name, agent: served ? variantOf(served, record ?? {}) : createAgent({ name }) };
  }
  const view = (id: string, state: AgentState): RunView => {
    const { name, agent } = readerOf(id);
    return runView(agent, name, id, state);
  };

  /** The run as stored, checked whole (migrated if older); undefined when there is none. */
  async function load(id: string): Promise<Stored | undefined> {
    try {
      const stored = await store.load(id);
      return stored && { state: await restore(stored.state), version: stored.version };
    } catch (error) {
      throw new Error(`the saved state of run ${id} cannot be read: ${messageOf(error)}`);
    }
  }

  /** Whether `who` may see run `id`: with an `authorize` hook, only its owner does (a run nobody owns, nobody). */
  const visible = (id: string, who: Principal) => !options.owned || journal.record(id)?.owner === who;

  async function existing(id: string, who: Principal): Promise<Stored> {
    // Someone else's run is "not there": its id says nothing about whether it exists.
    const stored = visible(id, who) ? await load(id) : undefined;
    if (!stored) throw new RequestRefusedError(404, `no run ${id}`);
    return stored;
  }

  /** Records a decision taken on `stored`, unless the run changed since it was read (then undefined). */
  async function decide(id: string, stored: Stored, event: AgentEvent): Promise<AgentState | undefined> {
    const { agent } = agentOf(journal.record(id));
    const [next] = (agent.step ?? step)(agent.config, stored.state, event);
    try {
      await store.save(id, next, stored.version);
    } catch (error) {
      if (error instanceof CheckpointConflictError) return undefined;
      throw error;
    }
    legRecorder(journal, id).decided(event, stored.state, next);
    return next;
  }

  function publish(entry: LiveRun, data: object) {
    const message = { id: `${entry.leg}.${entry.messages.length}`, data };
    entry.messages.push(message);
    for (const subscriber of entry.subscribers) subscriber.send(message);
  }

  type Leg = (agent: Agent, runOptions: RunOptions) => AsyncIterable<RunItem>;

  /** Runs one leg; synchronous up to `live.set`, so a check of `live` just before it cannot race. */
  function start(id: string, leg: Leg) {
    const record = journal.record(id);
    const { agent } = agentOf(record);
    const entry: LiveRun = {
      controller: new AbortController(),
      leg: randomUUID().slice(0, 8),
      messages: [],
      subscribers: new Set(),
      done: Promise.resolve(),
    };
    const recorder = legRecorder(journal, id);
    let journalFailed = false;
    const onItem = (item: RunItem) => {
      // The journal serves the studio: a failing one is reported once, never stops the run.
      try {
        recorder.item(item);
      } catch (error) {
        if (!journalFailed) log(`run ${id}: the journal cannot be written: ${messageOf(error)}`);
        journalFailed = true;
      }
      if (item.type === 'delta') return;
      // A checkpoint that cannot be saved stops the run at its last saved state: say so, or the run
      // just looks paused until the next `recover`.
      if (
        item.type === 'event' &&
        !item.origin &&
        item.event.type === 'faulted' &&
        item.event.error.code === 'CHECKPOINT_FAILED'
      )
        log(`run ${id} stopped: ${item.event.error.message} (it goes on from its last checkpoint at the next recover)`);
      publish(entry, wireItem(item));
      if (item.type !== 'event' || item.origin) return;
      entry.state = item.state;
      // The planning tool keeps its plans in the state: a new plan object is a changed plan.
      const plan = planOf(item.state);
      if (plan !== entry.plan) {
        entry.plan = plan;
        if (plan) publish(entry, { type: 'plan', plan });
      }
    };
    const { signal } = entry.controller;
    const plain: RunOptions = { ...options.runOptions, llm: llmOf(record), runId: id, store, signal };
    const legOptions = options.tracing ? options.tracing(agent, plain, traceLinkOf(id, record)) : plain;
    // Each transition is saved expecting the version before it: a decision recorded meanwhile by
    // another request makes this leg stop rather than overwrite it.
    entry.done = (async () => {
      for await (const item of leg(agent, legOptions)) onItem(item);
    })()
      // The last checkpoint stays in the store; `recover` picks the run up again.
      .catch((error: unknown) => log(`run ${id} stopped: ${messageOf(error)}`))
      .finally(async () => {
        if (live.get(id) === entry) {
          live.delete(id);
          ended.delete(id);
          ended.set(id, entry);
          for (const oldest of ended.keys()) {
            if (ended.size <= ENDED_LEGS_KEPT) break;
            ended.delete(oldest);
          }
        }
        const last = (await load(id).catch(() => undefined))?.state ?? entry.state;
        // A run that ended has no pause left to continue: its next task starts a trace of its own.
        if (last && isFinal(last)) forgetTraceLink(id);
        for (const subscriber of entry.subscribers) {
          if (last) subscriber.send({ data: { type: endingOf(last), run: view(id, last) } });
          subscriber.end();
        }
      });
    ended.delete(id);
    live.set(id, entry);
  }

  /** The pause link for a leg of run `id`: the last pause's, and where this leg's pause is kept. */
  function traceLinkOf(id: string, record: RunRecord | undefined): LegTraceLink {
    const onPause = (traceLink: TraceLink) => {
      const current = journal.record(id);
      if (current) journal.setRecord(id, { ...current, traceLink });
    };
    return record?.traceLink ? { onPause, continues: record.traceLink } : { onPause };
  }
  function forgetTraceLink(id: string) {
    const record = journal.record(id);
    if (!record?.traceLink) return;
    const { traceLink: _, ...rest } = record;
    journal.setRecord(id, rest);
  }

  const resumeLeg =
    (id: string): Leg =>
    (agent, o) =>
      streamResume(agent, id, o);
  const busy = (id: string) => new RequestRefusedError(409, `run ${id} is busy; try again once it has paused or ended`);

  /** The run's summary for the list; never throws (an unreadable run is listed as such). */
  async function summaryOf(id: string): Promise<RunSummary> {
    const record = journal.record(id);
    const { transitions, lastAt } = journal.summary(id);
    const base = {
      id,
      agent: record?.agent ?? defaultAgent ?? '',
      ...(record ? { model: record.modelId ?? llmOf(record).model } : {}),
      transitions,
      startedAt: iso(record?.createdAt),
      updatedAt: iso(lastAt),
      ...(record?.forkedFrom ? { forkedFrom: record.forkedFrom } : {}),
    };
    try {
      const state = live.get(id)?.state ?? (await load(id))?.state;
      if (!state) return { ...base, status: 'starting', step: 0, cachedShare: null, costUsd: null, durationMs: null };
      const { usage } = state;
      const end = live.has(id) ? Date.now() : lastAt;
      return {
        ...base,
        status: state.status,
        task: state.messages[state.taskIndex]?.content,
        step: state.step,
        usage: usageView(usage),
        cachedShare: usage.inputTokens > 0 ? (usage.cachedInputTokens ?? 0) / usage.inputTokens : null,
        costUsd: costOf(usage),
        durationMs: record && end !== undefined ? end - record.createdAt : null,
      };
    } catch (error) {
      return {
        ...base,
        status: 'unreadable',
        step: 0,
        cachedShare: null,
        costUsd: null,
        durationMs: null,
        error: messageOf(error),
      };
    }
  }

  async function cancelled(id: string, who: Principal): Promise<RunView> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const entry = visible(id, who) ? live.get(id) : undefined;
      if (entry) {
        entry.controller.abort(CANCEL_REASON);
        await entry.done;
        continue;
      }
      const stored = await existing(id, who);
      if (isFinal(stored.state)) return view(id, stored.state);
      if (live.has(id)) continue;
      const next = await decide(id, stored, { type: 'cancelled', reason: CANCEL_REASON });
      if (next) return view(id, next);
    }
    throw new RequestRefusedError(409, `run ${id} kept changing; try again`);
  }

  /** The journal of a run `who` may see. */
  async function journalOf(id: string, who: Principal) {
    await existing(id, who);
    return journal.entries(id);
  }

  function newRun(record: RunRecord): string {
    const id = randomUUID();
    journal.setRecord(id, record);
    return id;
  }

  return {
    /** Starts a new run of `agent` (default the first) on `task`; resolves with its id at once. */
    start(task: string, who: Principal, agent = defaultAgent): string {
      if (!agent || !agents[agent]) throw new RequestRefusedError(400, `no agent ${agent} here`);
      const id = newRun({
        agent,
        createdAt: Date.now(),
        modelId: llm.model,
        ...(who !== undefined ? { owner: who } : {}),
      });
      start(id, (a, o) => stream(a, task, o));
      return id;
    },

    async view(id: string, who: Principal): Promise<RunView> {
      const entry = visible(id, who) ? live.get(id) : undefined;
      const state = entry?.state ?? (await existing(id, who)).state;
      return view(id, state);
    },

    /**
     * A page of the runs `who` may see, newest first, filtered. States are read only until the
     * page is full, a batch at a time: the list costs the page, not every run ever kept.
     */
    async list(who: Principal, filter: RunFilter = {}): Promise<RunsPage> {
      const limit = Math.min(Math.max(1, filter.limit ?? RUNS_PAGE.default), RUNS_PAGE.max);
      const offset = Math.max(0, filter.offset ?? 0);
      const q = filter.q?.toLowerCase();
      const matches = (run: RunSummary) =>
        (!filter.status || run.status === filter.status) && (!q || run.task?.toLowerCase().includes(q));
      const ids = (await store.list()).filter(
        (id) => visible(id, who) && (!filter.agent || (journal.record(id)?.agent ?? defaultAgent) === filter.agent),
      );
      const runs: RunSummary[] = [];
      let skipped = 0;
      let at = 0;
      while (at < ids.length && runs.length <= limit) {
        const batch = await Promise.all(ids.slice(at, at + SUMMARY_BATCH).map(summaryOf));
        at += batch.length;
        for (const run of batch.filter(matches)) {
          if (skipped < offset) skipped++;
          else runs.push(run);
        }
      }
      // One more than the page was looked for: it says whether a next page exists.
      const more = runs.length > limit;
      return {
        runs: runs.slice(0, limit),
        ...(more ? { next: offset + limit } : {}),
        quarantined: options.owned ? [] : quarantined,
      };
    },

    /** Approves or rejects the pending call `effectId`: one compare-and-set, then the run goes on. */
    async decide(id: string, who: Principal, effectId: string, decision: Decision): Promise<void> {
      const stored = await existing(id, who);
      if (live.has(id)) throw busy(id);
      const { agent } = agentOf(journal.record(id));
      const input = pendingInputs(agent.config, stored.state).find(
        (p) => p.kind === 'approval' && p.effectId === effectId,
      );
      if (!input) throw new RequestRefusedError(409, `call ${effectId} is not waiting for approval`);
      const event: AgentEvent = decision.approved
        ? { type: 'approvalGiven', effectId }
        : { type: 'approvalDenied', effectId, ...(decision.reason ? { reason: decision.reason } : {}) };
      // Of two decisions read at the same version, only the first is saved.
      if (!(await decide(id, stored, event)))
        throw new RequestRefusedError(409, `call ${effectId} was decided by another request`);
      // From the store, so that the run goes on from exactly what was recorded.
      start(id, resumeLeg(id));
    },

    /**
     * A person's message: the reply to the question the run waits on, else the next task of a
     * run that has ended (multi-turn: the conversation goes on in the same state).
     */
    async message(id: string, who: Principal, text: string): Promise<void> {
      const stored = await existing(id, who);
      if (live.has(id)) throw busy(id);
      const { state } = stored;
      const { agent } = agentOf(journal.record(id));
      const question = pendingInputs(agent.config, state).find((p) => p.kind === 'human');
      if (question) {
        const answered = await decide(id, stored, { type: 'humanReplied', effectId: question.effectId, answer: text });
        if (!answered) throw new RequestRefusedError(409, `the question of run ${id} was answered by another request`);
        return start(id, resumeLeg(id));
      }
      if (!isFinal(state) && state.status !== 'idle')
        throw new RequestRefusedError(
          409,
          `run ${id} is ${state.status}: answer what it waits for, or cancel it, first`,
        );
      // `stream` reads the run from the store and saves the new task at the version it read.
      start(id, (a, o) => stream(a, text, o));
    },

    /** A running run is stopped; a paused or unfinished one is recorded as cancelled (compare-and-set). */
    cancel: cancelled,

    /**
     * The run's messages from now on (the current leg's after `lastEventId`, if it names one of
     * them, else a snapshot first), ending when the leg does; a run not in flight gets its view and the end.
     */
    async subscribe(id: string, who: Principal, subscriber: Subscriber, lastEventId?: string): Promise<() => void> {
      const stored = live.has(id) ? undefined : await existing(id, who);
      if (!visible(id, who)) throw new RequestRefusedError(404, `no run ${id}`);
      const entry = live.get(id);
      const [leg, index] = lastEventId?.split('.') ?? [];
      if (!entry) {
        const state = stored?.state ?? (await existing(id, who)).state;
        const last = ended.get(id);
        if (last)
          for (const message of last.messages.slice(leg === last.leg ? Number(index) + 1 : 0)) subscriber.send(message);
        subscriber.send({ data: { type: endingOf(state), run: view(id, state) } });
        subscriber.end();
        return () => undefined;
      }
      if (leg === entry.leg) {
        for (const message of entry.messages.slice(Number(index) + 1)) subscriber.send(message);
      } else if (entry.state) {
        // Where the leg is now, then what happens next; nothing in between is lost (no await here).
        subscriber.send({
          id: `${entry.leg}.${entry.messages.length - 1}`,
          data: { type: 'snapshot', run: view(id, entry.state) },
        });
      } else {
        for (const message of entry.messages) subscriber.send(message);
      }
      entry.subscribers.add(subscriber);
      return () => entry.subscribers.delete(subscriber);
    },

    /** The run's transitions, model calls and tool calls (child runs nested), for the studio. */
    async trace(id: string, who: Principal) {
      const entries = await journalOf(id, who);
      const { agent } = readerOf(id);
      const state = live.get(id)?.state ?? (await existing(id, who)).state;
      return {
        run: await summaryOf(id),
        ...runTrace(entries),
        pending: runView(agent, '', id, state).pending,
      };
    },

    /** What model call `effectId` was sent, whole. */
    async modelCall(id: string, who: Principal, effectId: string) {
      const request = requestOf(await journalOf(id, who), effectId);
      if (!request) throw new RequestRefusedError(404, `run ${id} made no model call ${effectId}`);
      return { effectId, ...request };
    },

    /** The state after transition `n`, and the event that made it. */
    async transition(id: string, who: Principal, n: number) {
      const entries = await journalOf(id, who);
      const state = stateAt(entries, n);
      const entry = entries.find((e) => e.kind === 'event' && e.n === n);
      if (!state || entry?.kind !== 'event') throw new RequestRefusedError(404, `run ${id} has no transition ${n}`);
      return { n, event: entry.event, state };
    },

    /** What changed from the state after transition `from` to the one after `to`. */
    async diff(id: string, who: Principal, from: number, to: number) {
      const entries = await journalOf(id, who);
      const before = stateAt(entries, from);
      const after = stateAt(entries, to);
      if (!before || !after) throw new RequestRefusedError(404, `run ${id} has no transition ${before ? to : from}`);
      return { from, to, ...jsonDiff(before, after) };
    },

    /**
     * A new run from the state after transition `transition` of run `id`, optionally on another
     * model, system prompt or tool subset; it goes on at once unless that state waits for a person.
     */
    async fork(id: string, who: Principal, request: ForkRequest): Promise<string> {
      const entries = await journalOf(id, who);
      const from = journal.record(id);
      const { agent } = agentOf(from);
      const state = stateAt(entries, request.transition);
      if (!state) throw new RequestRefusedError(404, `run ${id} has no transition ${request.transition}`);
      if (request.model !== undefined && !models[request.model])
        throw new RequestRefusedError(
          400,
          `no model ${request.model} here (there are: ${Object.keys(models).join(', ') || 'none'})`,
        );
      const known = new Set(agents[from?.agent ?? defaultAgent ?? '']?.tools.map((tool) => tool.spec.name));
      const unknown = request.tools?.filter((name) => !known.has(name)) ?? [];
      if (unknown.length > 0) throw new RequestRefusedError(400, `the agent has no tool ${unknown.join(', ')}`);
      const model = request.model ?? from?.model;
      const systemPrompt = request.systemPrompt ?? from?.systemPrompt;
      const tools = request.tools ?? from?.tools;
      const forked = newRun({
        agent: from?.agent ?? defaultAgent ?? '',
        createdAt: Date.now(),
        ...(who !== undefined ? { owner: who } : {}),
        ...(model !== undefined ? { model } : {}),
        modelId: model !== undefined && models[model] ? (models[model] as LlmPort).model : llm.model,
        ...(systemPrompt !== undefined ? { systemPrompt } : {}),
        ...(tools !== undefined ? { tools } : {}),
        forkedFrom: { runId: id, transition: request.transition },
      });
      const start = await restore({ ...state, runId: forked });
      journal.append(forked, { kind: 'start', at: Date.now(), state: start });
      await store.save(forked, start, 0);
      const waiting = pendingInputs(agent.config, start).length > 0 || start.status === 'idle' || isFinal(start);
      if (!waiting) startLeg(forked);
      return forked;
    },

    /** Re-runs run `id`'s recorded events through its agent (optionally changed): where does it diverge? */
    async replay(id: string, who: Principal, changes: AgentChanges & { readonly agent?: string }) {
      const entries = await journalOf(id, who);
      const record = journal.record(id);
      const name = changes.agent ?? record?.agent ?? defaultAgent ?? '';
      const base = agents[name];
      if (!base) throw new RequestRefusedError(400, `no agent ${name} here`);
      const agent = variantOf(variantOf(base, record ?? {}), changes);
      const first = entries.find((entry) => entry.kind === 'start');
      const start = first?.kind === 'start' ? (first.state as AgentState) : initialState();
      return replayRun(agent, entries, start);
    },

    /** Takes damaged runs out of the store, then resumes the unfinished rest (not those waiting for a person). */
    async recover(): Promise<string[]> {
      const resumed: string[] = [];
      for (const id of await store.list()) {
        if (live.has(id)) continue;
        let state: AgentState;
        try {
          const stored = await load(id);
          if (!stored) throw new Error(`run ${id} is listed but holds no state`);
          state = stored.state;
        } catch (error) {
          const moved = await quarantine(store, join(options.dataDir, 'quarantine'), id, messageOf(error));
          quarantined.push(moved);
          log(`run ${id} quarantined${moved.file ? ` to ${moved.file}` : ''}: ${moved.reason}`);
          continue;
        }
        const waiting = state.status === 'awaiting_approval' || state.status === 'awaiting_human';
        if (live.has(id) || waiting || isFinal(state) || state.status === 'idle') continue;
        startLeg(id);
        resumed.push(id);
      }
      return resumed;
    },

    quarantined: (): readonly QuarantinedRun[] => quarantined,

    /** Waits for every run in flight to end or pause. */
    async idle(): Promise<void> {
      while (live.size > 0) await Promise.all([...live.values()].map((entry) => entry.done));
    },
  };

  function startLeg(id: string) {
    start(id, resumeLeg(id));
  }
}

export type Runs = ReturnType<typeof createRuns>;
