import type { LlmPort } from '../llm/llm.js';
import { errAsync } from '../result.js';
import { sandboxOf } from '../sandbox/runSandbox.js';
import type { Tool } from '../tools/defineTool.js';
import type { RunItem } from './runItems.js';
import type { SandboxProvider } from './sandboxPort.js';
import { createResourcePool, type HostCallbacks, hostCallbacksOf, type RunScope, type ToolRelay } from './scope.js';
import { executeTool, type ToolEvent } from './toolExecution.js';

export interface ToolRunOptions extends HostCallbacks {
  readonly workspace?: string;
  /** The model tools that call it themselves get (default: one that refuses every request). */
  readonly llm?: LlmPort;
  readonly runId?: string;
  /** Time limit for a call of a tool without its own `timeoutMs` (default 120 s). */
  readonly toolTimeoutMs?: number;
  /** Receives the items tools announce. */
  readonly onItem?: (item: RunItem) => void;
  /** Where the tools execute: one sandbox for this run, made on first use, removed by `close` (default: the host). */
  readonly sandbox?: SandboxProvider;
}

/** What one call of a tool run may have of its own: a signal, where its items go, a relay for its questions. */
export interface ToolCallHooks {
  readonly signal?: AbortSignal;
  /** Receives this call's items (its progress, its log) instead of the run's `onItem`. */
  readonly onItem?: (item: RunItem) => void;
  /** Where this call's elicitation and sampling go (an MCP session: the client that called it). */
  readonly relay?: ToolRelay;
}

export interface ToolRun {
  readonly runId: string;
  /**
   * Calls `tool` as a run would: arguments validated, its time limit, this run's data and
   * resources (a shell, a browser context), whatever goes wrong as an error observation.
   */
  call(tool: Tool, args: unknown, options?: ToolCallHooks): Promise<ToolEvent>;
  /** A tool's per-run data after its last call (what a run keeps in its state). */
  dataOf(toolName: string): unknown;
  /** Ends the run: calls still going are cancelled, the resources the tools opened are closed. */
  close(): Promise<void>;
}

const noModel: LlmPort = {
  model: 'none',
  complete: () => errAsync({ kind: 'config', message: 'no model in this tool run' }),
};

/**
 * One run's worth of tool calls without an agent: for hosts that call tools themselves (an MCP
 * server's session, a test). Each ToolRun has its own resources, closed by `close`.
 */
export function createToolRun(options: ToolRunOptions = {}): ToolRun {
  const pool = createResourcePool();
  const ended = new AbortController();
  const data = new Map<string, unknown>();
  let seq = 0;
  const runId = options.runId ?? crypto.randomUUID();
  const scope: RunScope = {
    runId,
    signal: ended.signal,
    llm: options.llm ?? noModel,
    ...(options.workspace !== undefined ? { workspace: options.workspace } : {}),
    ...hostCallbacksOf(options),
    resource: (key, open, close) => pool.get(key, open, close),
    ...(options.sandbox
      ? { sandbox: sandboxOf(options.sandbox, pool, runId, options.workspace, () => ended.signal) }
      : {}),
    emit: (item) => options.onItem?.(item),
    // Tools that change the toolset mid-run need an agent whose model sees the change.
    changeTools: async () => {},
  };
  return {
    runId,
    async call(tool, args, { signal, onItem, relay } = {}) {
      const id = `call-${++seq}`;
      const { name, parallelSafe, timeoutMs } = tool.spec;
      const event = await executeTool(
        {
          type: 'callTool',
          id,
          call: { id, name, arguments: JSON.stringify(args) ?? '' },
          args,
          parallelSafe: parallelSafe === true,
          ...(timeoutMs !== undefined ? { timeoutMs } : {}),
        },
        tool,
        {
          ...scope,
          ...(signal ? { signal: AbortSignal.any([signal, ended.signal]) } : {}),
          ...(onItem ? { emit: onItem } : {}),
          ...(relay ? { relay } : {}),
        },
        {
          data: data.get(name),
          ...(options.toolTimeoutMs !== undefined ? { toolTimeoutMs: options.toolTimeoutMs } : {}),
        },
      );
      if (event.type === 'toolCompleted' && event.data !== undefined) data.set(name, event.data);
      return event;
    },
    dataOf: (toolName) => data.get(toolName),
    async close() {
      ended.abort(new Error('the run has ended'));
      await pool.close();
    },
  };
}
