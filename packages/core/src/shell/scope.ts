import type { HostAnswer } from '../kernel/events.js';
import type { ToolCall } from '../kernel/messages.js';
import type { Usage } from '../kernel/state.js';
import type { LlmPort } from '../llm/llm.js';
import type { Tool } from '../tools/defineTool.js';
import type { ItemOrigin, RunItem } from './runItems.js';
import type { Sandbox } from './sandboxPort.js';

export type ApprovalDecision = boolean | { readonly approved: boolean; readonly reason?: string };

/** The host's answers to people's questions and approvals; without them a run pauses instead. */
export interface HostCallbacks {
  readonly onHuman?: (question: string, call: ToolCall) => Promise<string> | string;
  readonly onApproval?: (call: ToolCall, args: unknown) => Promise<ApprovalDecision> | ApprovalDecision;
}

/** What everything working for one run shares: its id, its signal, its resources. */
export interface RunScope extends HostCallbacks {
  readonly runId: string;
  /** Aborted when the run is cancelled or ends. */
  readonly signal: AbortSignal;
  readonly workspace?: string;
  /** The run's model, for work that calls it itself (summarise a page, run a child agent). */
  readonly llm: LlmPort;
  /**
   * A resource of this run (a browser, an MCP session, a shell): opened on first use, closed
   * when this run ends — never shared with another run unless the host passed a shared pool.
   */
  resource<T>(key: string, open: () => T | Promise<T>, close?: (value: T) => void | Promise<void>): Promise<T>;
  /**
   * The run's sandbox, opened on first use and removed when the run ends — present only when the
   * run was given a sandbox provider; without one, tools run on the host.
   */
  readonly sandbox?: () => Promise<Sandbox>;
  /** Announces run items of your own (a child agent's), tagged as coming from you. */
  emit(item: RunItem): void;
  /** Whether anything takes this run's `delta` items now (a stream reader, a listener): a child agent streams only then. */
  readonly takesDeltas?: () => boolean;
  /**
   * Changes the tools the model sees from the next request on (an MCP server's list changed). The
   * list keeps its order (a prompt cache serves the requests after): an added tool goes at the end, a
   * removed one stays listed and its calls are answered as unavailable — unless `exact` asks for the
   * list without it (the cache then starts again).
   */
  changeTools(change: {
    readonly add?: readonly Tool[];
    readonly remove?: readonly string[];
    readonly exact?: boolean;
  }): Promise<void>;
}

/** What one tool call gets besides its arguments. */
export interface ToolScope extends RunScope {
  readonly callId: string;
  /** The effect this call serves: stable across a resume, so it is the call's idempotency key. */
  readonly effectId: string;
  /** What this call recorded before the run was interrupted (continue from it), if anything. */
  readonly progress?: unknown;
  /** A person's answer to what this call paused on (`suspend`), with ids relative to the call. */
  readonly answer?: HostAnswer;
  /** Announces a child run's items, tagged with this call (and the child agent and model, when it runs one). */
  emit(item: RunItem, child?: Pick<ItemOrigin, 'agent' | 'model'>): void;
  /** Records how far the call got; a resumed run hands it back as `progress`. */
  saveProgress(progress: unknown): void;
  /** This tool's data for this run (kept in the run's state, so it survives a resume). */
  readonly data: unknown;
  /** Replaces this tool's data for this run; saved with the call's result. */
  setData(data: unknown): void;
  /** Counts model use of the tool's own (a child agent's calls) in the run's usage. */
  addUsage(usage: Usage): void;
}

/** Resources by key, opened once, closed together. */
export interface ResourcePool {
  get<T>(key: string, open: () => T | Promise<T>, close?: (value: T) => void | Promise<void>): Promise<T>;
  /** Closes everything opened, newest first; a failing close does not stop the others. */
  close(): Promise<void>;
}

export function createResourcePool(): ResourcePool {
  const opened = new Map<string, { value: Promise<unknown>; close?: (value: never) => void | Promise<void> }>();
  return {
    get<T>(key: string, open: () => T | Promise<T>, close?: (value: T) => void | Promise<void>): Promise<T> {
      const known = opened.get(key);
      if (known) return known.value as Promise<T>;
      const value = Promise.resolve().then(open);
      // A resource that failed to open is not kept: the next use tries again.
      value.catch(() => opened.delete(key));
      opened.set(key, close ? { value, close: close as (value: never) => void } : { value });
      return value;
    },
    async close() {
      const all = [...opened.values()].reverse();
      opened.clear();
      await Promise.allSettled(
        all.map(async ({ value, close }) => {
          if (close) await close((await value) as never);
        }),
      );
    },
  };
}
