import type { LlmPort } from '../llm/llm.js';
import type { RunItem } from '../shell/runItems.js';
import type { SandboxProvider } from '../shell/sandboxPort.js';
import { createToolRun } from '../shell/toolRun.js';
import type { Tool } from '../tools/defineTool.js';

export interface ToolSessionOptions {
  readonly workspace?: string;
  /** The model tools that call it themselves get (default: one that refuses every request). */
  readonly llm?: LlmPort;
  readonly runId?: string;
  /** Where the tool executes: one sandbox for the session, removed by `close` (default: the host). */
  readonly sandbox?: SandboxProvider;
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

/** One tool, called several times as within one run: for testing a tool without a model. */
export function toolSession(tool: Tool, options: ToolSessionOptions = {}): ToolSession {
  const items: RunItem[] = [];
  const run = createToolRun({ runId: 'tool-session', ...options, onItem: (item) => void items.push(item) });
  return {
    async call(args, callOptions) {
      const event = await run.call(tool, args, callOptions);
      if (event.type === 'toolSuspended') return { output: 'suspended', isError: true };
      return { output: event.output, isError: event.isError === true };
    },
    get data() {
      return run.dataOf(tool.spec.name);
    },
    items,
    close: () => run.close(),
  };
}
