import type { AgentEvent, ItemOrigin, Message, ToolChoice, ToolSpec } from '@openmanus/core';
import type { StateDelta } from '@openmanus/core/internal';

/**
 * A message of a recorded model request: a range of the run's state messages (the same objects,
 * so a request costs a few numbers however long the history), or one message the request had
 * of its own (the system prompt, a next-step prompt, a summary).
 */
export type SentMessage = { readonly from: number; readonly to: number } | { readonly message: Message };

/** A model request as journaled: its messages against the state of transition `n`, its tools once per change. */
export interface SentRequest {
  readonly messages: readonly SentMessage[];
  /** The tools, or absent when they are those of the run's previous model call. */
  readonly tools?: readonly ToolSpec[];
  readonly toolChoice: ToolChoice;
}

/**
 * What the studio and time travel read of a run, in order: every transition (the event and what
 * it changed), every effect started (model requests compacted), and what child runs did.
 * `at` is milliseconds since the epoch.
 */
export type JournalEntry =
  | {
      readonly kind: 'event';
      readonly n: number;
      readonly at: number;
      readonly event: AgentEvent;
      /** The change from transition `n - 1`'s state; with `full`, from nothing (a leg's first state). */
      readonly delta: StateDelta;
      readonly full?: true;
    }
  | {
      readonly kind: 'effect';
      readonly at: number;
      /** The transition whose state the effect started from. */
      readonly n: number;
      readonly effectId: string;
      readonly effectType: string;
      readonly effect: object;
      readonly request?: SentRequest;
    }
  | { readonly kind: 'child'; readonly at: number; readonly origin: readonly ItemOrigin[]; readonly item: object }
  /** The state a forked run starts from (a new run starts from core's initial state). */
  | { readonly kind: 'start'; readonly at: number; readonly state: object };

/** How long a run's journal is, and when it last changed. */
export interface JournalSummary {
  readonly transitions: number;
  readonly lastAt?: number;
}

/** What a run is besides its state: which agent runs it, for whom, where it came from. */
export interface RunRecord {
  readonly agent: string;
  /** Whom the `authorize` hook said the run belongs to (absent without a hook). */
  readonly owner?: string;
  readonly createdAt: number;
  /** The model it was started with, by name in the server's `models` (absent: the default). */
  readonly model?: string;
  /** That model's id (`LlmPort.model`), as it was when the run started. */
  readonly modelId?: string;
  readonly systemPrompt?: string;
  readonly tools?: readonly string[];
  readonly forkedFrom?: { readonly runId: string; readonly transition: number };
  /** Where the run's trace stood when it last paused (the `tracing` option's link), for the leg that resumes it. */
  readonly traceLink?: TraceLink;
}

/** A paused run's place in its trace, as `@openmanus/tracing` gives it (plain JSON, kept with the run's record). */
export interface TraceLink {
  readonly traceparent: string;
  readonly pausedAt: string;
  readonly waitingFor?: string;
}

/** Where the server keeps its runs' records and journals: in memory, or SQLite (`createSqliteJournal`). */
export interface RunJournal {
  record(runId: string): RunRecord | undefined;
  setRecord(runId: string, record: RunRecord): void;
  append(runId: string, entry: JournalEntry): void;
  entries(runId: string): readonly JournalEntry[];
  summary(runId: string): JournalSummary;
  delete(runId: string): void;
  close?(): void;
}

/** A journal that lives as long as the process (tests, a studio over a store no server wrote). */
export function createMemoryJournal(): RunJournal {
  const records = new Map<string, RunRecord>();
  const logs = new Map<string, JournalEntry[]>();
  return {
    record: (runId) => records.get(runId),
    setRecord: (runId, record) => void records.set(runId, record),
    append(runId, entry) {
      const log = logs.get(runId);
      if (log) log.push(entry);
      else logs.set(runId, [entry]);
    },
    entries: (runId) => logs.get(runId) ?? [],
    summary(runId) {
      const log = logs.get(runId) ?? [];
      const last = log.at(-1);
      return {
        transitions: log.filter((entry) => entry.kind === 'event').length,
        ...(last ? { lastAt: last.at } : {}),
      };
    },
    delete(runId) {
      records.delete(runId);
      logs.delete(runId);
    },
  };
}
