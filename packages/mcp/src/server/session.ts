import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  type Implementation,
  ListToolsRequestSchema,
  McpError,
  type Tool as McpTool,
  SetLevelRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { LogLevel, Tool } from '@openmanus/core';
import { createToolRun, type ToolEvent, type ToolRunOptions } from '@openmanus/core/internal';
import { callNotifier } from './notifications.js';
import { clientRelay } from './relay.js';
import { toCallToolResult } from './toolContent.js';

/** A tool's time limit when neither it nor the server sets one (core's). */
const TOOL_TIMEOUT_MS = 120_000;
/** The least time a client's person has to answer a tool's question (elicitation, sampling approval). */
const QUESTION_MS = 10 * 60_000;

/** One client's connection: its own run of the tools (its shell, its browser context), until it closes. */
export interface McpSession {
  /** The run id the session's tools see. */
  readonly runId: string;
  /** Resolves once the session has ended and its tools' resources are closed. */
  readonly closed: Promise<void>;
  /** Ends the session: closes the connection, cancels calls still going, closes the tools' resources. */
  close(): Promise<void>;
}

export interface SessionSettings {
  readonly info: Implementation;
  readonly instructions?: string;
  readonly tools: ReadonlyMap<string, Tool>;
  /** The tools as listed (see `listTools`). */
  readonly listing: readonly McpTool[];
  readonly run: Omit<ToolRunOptions, 'runId'>;
  readonly onError?: (error: Error) => void;
  /**
   * Adds what the session serves besides tools (resources, prompts, completion): its handlers and
   * capabilities (`server.registerCapabilities`), before the client connects.
   */
  readonly configure?: (server: Server) => void;
}

/** Serves the tools to one client over `transport`, with a run scope of the session's own. */
export async function openSession(transport: Transport, settings: SessionSettings): Promise<McpSession> {
  const { tools } = settings;
  const onError = settings.onError ?? (() => {});
  const run = createToolRun(settings.run);
  const server = new Server(settings.info, {
    capabilities: { tools: {}, logging: {} },
    ...(settings.instructions !== undefined ? { instructions: settings.instructions } : {}),
  });
  // Tools that are not parallel-safe run one call at a time, as in an agent's run (one shell, one editor history).
  let queue: Promise<unknown> = Promise.resolve();
  const serially = (call: () => Promise<ToolEvent>) => {
    const next = queue.then(call);
    queue = next.catch(() => {});
    return next;
  };
  // The level the client asked for (`logging/setLevel`); MCP leaves the default to the server, and
  // ours, as the SDK's, sends every line until the client says otherwise.
  let logLevel: LogLevel | undefined;
  server.setRequestHandler(SetLevelRequestSchema, ({ params }) => {
    logLevel = params.level;
    return {};
  });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...settings.listing] }));
  server.setRequestHandler(CallToolRequestSchema, async ({ params }, extra) => {
    const tool = tools.get(params.name);
    if (!tool) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool "${params.name}"; this server has ${[...tools.keys()].join(', ')}.`,
      );
    }
    const notifier = callNotifier(extra, () => logLevel, onError);
    // The call's questions to the client end with it. A person answers them, so the call's time limit
    // stops meanwhile, and a question has a limit of its own: the call's, but at least QUESTION_MS.
    const ended = new AbortController();
    const callLimit = tool.spec.timeoutMs ?? settings.run.toolTimeoutMs ?? TOOL_TIMEOUT_MS;
    const relay = clientRelay(server, {
      relatedRequestId: extra.requestId,
      signal: AbortSignal.any([extra.signal, ended.signal]),
      timeout: Math.max(callLimit, QUESTION_MS),
    });
    const call = () => run.call(tool, params.arguments ?? {}, { signal: extra.signal, onItem: notifier.onItem, relay });
    try {
      const event = await (tool.spec.parallelSafe ? call() : serially(call));
      await notifier.flushed();
      return toCallToolResult(event, tool.spec);
    } finally {
      ended.abort(new Error('the tool call has ended'));
    }
  });
  server.onerror = onError;
  settings.configure?.(server);

  let resolveClosed = () => {};
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  let closing: Promise<void> | undefined;
  const close = () => {
    // Set before anything runs: closing the server closes the transport, which calls this again.
    closing ??= Promise.resolve().then(async () => {
      await Promise.allSettled([server.close(), run.close()]);
      resolveClosed();
    });
    return closing;
  };
  server.onclose = () => void close();
  await server.connect(transport);
  return { runId: run.runId, closed, close };
}
