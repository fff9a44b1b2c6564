import type { LlmPort } from '../llm/llm.js';
import type { RunItem } from '../shell/runItems.js';
import { createResourcePool, type RunScope } from '../shell/scope.js';
import { executeTool } from '../shell/toolExecution.js';
import type { Tool } from '../tools/defineTool.js';

export interface ToolSessionOptions {
  readonly workspace?: string;
  /** The model tools that call it themselves get (default: one that refuses every request). */
  readonly llm?: LlmPort;
  readonly runId?: string;
}

export interface ToolSession {
  /** Calls the tool as a run would: validation, timeout, per-run data and resources, errors as observations. */
  call(args: unknown, options?: { readonly signal?: AbortSignal }): Promise<{ output: string; isError: boolean }>;
  /** The tool's per-run data after the last call (what a run keeps in its state). */
  readonly data: unknown;
  /** Items the tool emitted. */
  readonly items: readonly RunItem[];
  /** Closes the resources the tool opened, as the end of a run does. */
  close(): Promise<void>;
}

const noModel: LlmPort = {
  model: 'none',
  complete: async () => ({ ok: false, error: { kind: 'config', message: 'no model in this tool session' } }),
};

/** One tool, called several times as within one run: for testing a tool without a model. */
export function toolSession(tool: Tool, options: ToolSessionOptions = {}): ToolSession {
  const pool = createResourcePool();
  const ended = new AbortController();
  const items: RunItem[] = [];
  let data: unknown;
  let seq = 0;
  const scope: RunScope = {
    runId: options.runId ?? 'tool-session',
    signal: ended.signal,
    llm: options.llm ?? noModel,
    ...(options.workspace !== undefined ? { workspace: options.workspace } : {}),
    resource: (key, open, close) => pool.get(key, open, close),
    emit: (item) => void items.push(item),
    changeTools: async () => {},
  };
  return {
    async call(args, { signal } = {}) {
      const id = `call-${++seq}`;
      const run = signal ? { ...scope, signal: AbortSignal.any([signal, ended.signal]) } : scope;
      const event = await executeTool(
        {
          type: 'callTool',
          id,
          call: { id, name: tool.spec.name, arguments: JSON.stringify(args) },
          args,
          parallelSafe: tool.spec.parallelSafe === true,
          ...(tool.spec.timeoutMs !== undefined ? { timeoutMs: tool.spec.timeoutMs } : {}),
        },
        tool,
        run,
        { data },
      );
      if (event.type === 'toolSuspended') return { output: 'suspended', isError: true };
      if (event.data !== undefined) data = event.data;
      return { output: event.output, isError: event.isError === true };
    },
    get data() {
      return data;
    },
    items,
    async close() {
      ended.abort(new Error('the session has ended'));
      await pool.close();
    },
  };
}
