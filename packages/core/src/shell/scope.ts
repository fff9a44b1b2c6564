import type { HostAnswer } from '../kernel/events.js';
import type { ToolCall } from '../kernel/messages.js';
import type { Usage } from '../kernel/state.js';
import type { LlmPort } from '../llm/llm.js';
import type { Tool } from '../tools/defineTool.js';
import type { ItemOrigin, RunItem } from './runItems.js';
import type { Sandbox } from './sandboxPort.js';
import type {
  ElicitationRequest,
  ElicitationResult,
  LogLevel,
  SamplingRequest,
  SamplingResult,
  ToolProgress,
} from './toolRequests.js';

export type ApprovalDecision = boolean | { readonly approved: boolean; readonly reason?: string };

/** The host's answers to people's questions and approvals; without them a run pauses instead. */
export interface HostCallbacks {
  readonly onHuman?: (question: string, call: ToolCall) => Promise<string> | string;
  readonly onApproval?: (call: ToolCall, args: unknown) => Promise<ApprovalDecision> | ApprovalDecision;
  /**
   * Answers a tool's structured question for a person (MCP elicitation: a remote MCP server's, or
   * a tool's `scope.elicit`). Without it such a question is cancelled, and the tool told why.
   */
  readonly onElicitation?: (
    request: ElicitationRequest,
    call: ToolCall,
  ) => Promise<ElicitationResult> | ElicitationResult;
  /**
   * Approves a tool's request for a completion from the run's model (MCP sampling: a remote MCP
   * server's, or a tool's `scope.sample`). Without it such requests are refused.
   */
  readonly onSampling?: (request: SamplingRequest, call: ToolCall) => Promise<ApprovalDecision> | ApprovalDecision;
}

/** The host's callbacks `from` has, to hand on (to a tool's scope, a child agent's run). */
export function hostCallbacksOf(from: HostCallbacks): HostCallbacks {
  const { onHuman, onApproval, onElicitation, onSampling } = from;
  return {
    ...(onHuman ? { onHuman } : {}),
    ...(onApproval ? { onApproval } : {}),
    ...(onElicitation ? { onElicitation } : {}),
    ...(onSampling ? { onSampling } : {}),
  };
}

/**
 * Where a tool's questions go instead of the host's callbacks and the run's model: an MCP server
 * relays them to the client that called the tool.
 */
export interface ToolRelay {
  elicit(request: ElicitationRequest, call: ToolCall): Promise<ElicitationResult>;
  sample(request: SamplingRequest, call: ToolCall): Promise<SamplingResult>;
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
  /** Where tools' elicitation and sampling go instead (an MCP server's client). */
  readonly relay?: ToolRelay;
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
  /** Tells whoever follows the call how far it got: a `progress` run item; an MCP client's progress notification. */
  reportProgress(progress: ToolProgress): void;
  /** A line of the call's log: a `log` run item; an MCP client's log notification. */
  log(level: LogLevel, data: unknown, logger?: string): void;
  /**
   * Asks a person for an answer of the schema's shape: the MCP client's user when served over MCP,
   * else the host's `onElicitation` (without one: `cancel`).
   */
  elicit(request: ElicitationRequest): Promise<ElicitationResult>;
  /**
   * Asks a model for a completion: the MCP client's when served over MCP, else the run's model once
   * the host's `onSampling` approves (rejects otherwise); counted in the run's usage.
   */
  sample(request: SamplingRequest): Promise<SamplingResult>;
  /**
   * Calls `watch` whenever the call starts waiting on a person — its `elicit` answered by the host's
   * `onElicitation`, the host's `onSampling` approval of its `sample` — and what `watch` returned
   * once that wait is over. The call's time limit does not run meanwhile; a clock of the tool's own
   * (an MCP request's timeout) can stop the same way. Returns the function that stops watching.
   * Absent from a scope made by hand.
   */
  readonly onPersonWait?: (watch: () => () => void) => () => void;
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
