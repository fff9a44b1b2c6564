import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import {
  type Agent,
  type AgentEvent,
  type AgentState,
  CheckpointConflictError,
  type CheckpointStore,
  createRunEmitter,
  isFinal,
  type LlmPort,
  messageOf,
  type RunItem,
  type RunOptions,
  restore,
  resume,
  run,
  step,
} from '@openmanus/core';
import { pendingInputs } from '@openmanus/core/kernel';
import type { Plan } from '@openmanus/flow';
import { type QuarantinedRun, quarantine } from './quarantine.js';
import { planOf, type RunView, runView, wireItem } from './view.js';

/** A request the runs cannot take, with the HTTP status that says why. */
export class RequestRefusedError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
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

export interface RunsOptions {
  /** The agent, with the service's approval rules applied. */
  readonly agent: Agent;
  readonly llm: LlmPort;
  readonly store: CheckpointStore;
  /** Where damaged runs are written when taken out of the store. */
  readonly dataDir: string;
  readonly log: (line: string) => void;
  /** More options for every leg of every run (tool timeouts, a workspace). */
  readonly runOptions?: Omit<RunOptions, 'llm' | 'runId' | 'store' | 'signal' | 'emitter'>;
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

const CANCEL_REASON = 'cancelled by the client';
/** How many runs' ended legs are kept for late subscribers (the most recent ones). */
const ENDED_LEGS_KEPT = 100;

/** How a leg's stream ends: the run finished, or it waits for someone. */
const endingOf = (state: AgentState) => (isFinal(state) ? 'ended' : 'paused');

/**
 * The runs of one agent: started, answered, cancelled, continued, watched; every transition
 * saved in the store, every decision a compare-and-set on the stored version.
 */
export function createRuns(options: RunsOptions) {
  const { agent, llm, store, log } = options;
  const stepOf = agent.step ?? step;
  const live = new Map<string, LiveRun>();
  // The latest runs' last legs, once ended: a client that subscribes as a fast leg ends (a page
  // that asks for a run's events just after starting it) still gets the leg's messages.
  const ended = new Map<string, LiveRun>();
  const quarantined: QuarantinedRun[] = [];
  const view = (id: string, state: AgentState): RunView => runView(agent, id, state);

  /** The run as stored, checked whole (migrated if older); undefined when there is none. */
  async function load(id: string): Promise<Stored | undefined> {
    try {
      const stored = await store.load(id);
      return stored && { state: await restore(stored.state), version: stored.version };
    } catch (error) {
      throw new Error(`the saved state of run ${id} cannot be read: ${messageOf(error)}`);
    }
  }

  async function existing(id: string): Promise<Stored> {
    const stored = await load(id);
    if (!stored) throw new RequestRefusedError(404, `no run ${id}`);
    return stored;
  }

  /** Records a decision taken on `stored`, unless the run changed since it was read (then undefined). */
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

  function publish(entry: LiveRun, data: object) {
    const message = { id: `${entry.leg}.${entry.messages.length}`, data };
    entry.messages.push(message);
    for (const subscriber of entry.subscribers) subscriber.send(message);
  }

  /** Runs one leg; synchronous up to `live.set`, so a check of `live` just before it cannot race. */
  function start(id: string, go: (runOptions: RunOptions) => Promise<unknown>) {
    const entry: LiveRun = {
      controller: new AbortController(),
      leg: randomUUID().slice(0, 8),
      messages: [],
      subscribers: new Set(),
      done: Promise.resolve(),
    };
    const emitter = createRunEmitter();
    for (const type of ['effect', 'observation', 'result'] as const)
      emitter.on(type, (item: RunItem) => publish(entry, wireItem(item)));
    emitter.on('event', (item) => {
      entry.state = item.state;
      publish(entry, wireItem(item));
      // The planning tool keeps its plans in the state: a new plan object is a changed plan.
      const plan = planOf(item.state);
      if (plan !== entry.plan) {
        entry.plan = plan;
        if (plan) publish(entry, { type: 'plan', plan });
      }
    });
    const { signal } = entry.controller;
    // Each transition is saved expecting the version before it: a decision recorded meanwhile by
    // another request makes this leg stop rather than overwrite it.
    entry.done = go({ ...options.runOptions, llm, runId: id, store, signal, emitter })
      .then(() => undefined)
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
        for (const subscriber of entry.subscribers) {
          if (last) subscriber.send({ data: { type: endingOf(last), run: view(id, last) } });
          subscriber.end();
        }
      });
    ended.delete(id);
    live.set(id, entry);
  }

  const busy = (id: string) => new RequestRefusedError(409, `run ${id} is busy; try again once it has paused or ended`);

  async function cancelled(id: string): Promise<RunView> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const entry = live.get(id);
      if (entry) {
        entry.controller.abort(CANCEL_REASON);
        await entry.done;
        continue;
      }
      const stored = await existing(id);
      if (isFinal(stored.state)) return view(id, stored.state);
      if (live.has(id)) continue;
      const next = await decide(id, stored, { type: 'cancelled', reason: CANCEL_REASON });
      if (next) return view(id, next);
    }
    throw new RequestRefusedError(409, `run ${id} kept changing; try again`);
  }

  return {
    /** Starts a new run on `task`; resolves with its id at once. */
    start(task: string): string {
      const id = randomUUID();
      start(id, (o) => run(agent, task, o));
      return id;
    },

    async view(id: string): Promise<RunView> {
      const entry = live.get(id);
      const state = entry?.state ?? (await existing(id)).state;
      return view(id, state);
    },

    async list() {
      const runs = await Promise.all(
        (await store.list()).map(async (id) => {
          try {
            const state = live.get(id)?.state ?? (await load(id))?.state;
            return { id, status: state?.status ?? 'starting', task: state?.messages[state.taskIndex]?.content };
          } catch (error) {
            return { id, status: 'unreadable', error: messageOf(error) };
          }
        }),
      );
      return { runs, quarantined };
    },

    /** Approves or rejects the pending call `effectId`: one compare-and-set, then the run goes on. */
    async decide(id: string, effectId: string, decision: Decision): Promise<void> {
      const stored = await existing(id);
      if (live.has(id)) throw busy(id);
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
      start(id, (o) => resume(agent, id, o));
    },

    /**
     * A person's message: the reply to the question the run waits on, else the next task of a
     * run that has ended (multi-turn: the conversation goes on in the same state).
     */
    async message(id: string, text: string): Promise<void> {
      const stored = await existing(id);
      if (live.has(id)) throw busy(id);
      const { state } = stored;
      const question = pendingInputs(agent.config, state).find((p) => p.kind === 'human');
      if (question) {
        const answered = await decide(id, stored, { type: 'humanReplied', effectId: question.effectId, answer: text });
        if (!answered) throw new RequestRefusedError(409, `the question of run ${id} was answered by another request`);
        return start(id, (o) => resume(agent, id, o));
      }
      if (!isFinal(state) && state.status !== 'idle')
        throw new RequestRefusedError(
          409,
          `run ${id} is ${state.status}: answer what it waits for, or cancel it, first`,
        );
      // `run` reads the run from the store and saves the new task at the version it read.
      start(id, (o) => run(agent, text, o));
    },

    /** A running run is stopped; a paused or unfinished one is recorded as cancelled (compare-and-set). */
    cancel: cancelled,

    /**
     * The run's messages from now on (the current leg's after `lastEventId`, if it names one of
     * them, else a snapshot first), ending when the leg does; a run not in flight gets its view and the end.
     */
    async subscribe(id: string, subscriber: Subscriber, lastEventId?: string): Promise<() => void> {
      const stored = live.has(id) ? undefined : await existing(id);
      const entry = live.get(id);
      const [leg, index] = lastEventId?.split('.') ?? [];
      if (!entry) {
        const state = stored?.state ?? (await existing(id)).state;
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
        start(id, (o) => resume(agent, id, o));
        resumed.push(id);
      }
      return resumed;
    },

    quarantined: (): readonly QuarantinedRun[] => quarantined,

    /** Waits for every run in flight to end or pause. */
    async idle(): Promise<void> {
      await Promise.all([...live.values()].map((entry) => entry.done));
    },
  };
}

export type Runs = ReturnType<typeof createRuns>;
