import { createRequire } from 'node:module';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { LlmPort, Tool } from '@openmanus/core';
import { type CatalogNotifier, type CatalogOptions, createCatalog } from './catalog.js';
import { type HttpServeOptions, type HttpServing, serveHttp } from './http.js';
import { type McpSession, openSession } from './session.js';
import { type StdioServeOptions, serveStdio } from './stdio.js';
import { listTools } from './toolListing.js';

/** Besides tools, a server may serve resources, resource templates and prompts (see `CatalogOptions`). */
export interface McpServerOptions extends CatalogOptions {
  /** The server's name as clients see it (default "openmanus"). */
  readonly name?: string;
  /** Default: this package's version. */
  readonly version?: string;
  /** Told to each client when it connects (MCP `instructions`): how the tools go together. */
  readonly instructions?: string;
  /** The workspace of tools that work in the run's one (bash, str_replace_editor without their own). */
  readonly workspace?: string;
  /** The model for tools that call one themselves (default: none, and such calls get a clear error). */
  readonly llm?: LlmPort;
  /** Time limit for a call of a tool without its own (default 120 s). */
  readonly toolTimeoutMs?: number;
  /** Problems of the protocol or a connection (a malformed message, a broken pipe); default: ignored. */
  readonly onError?: (error: Error) => void;
}

/** Our tools served over MCP; every session has its own run scope (its own shell, browser context). */
export interface McpToolServer extends CatalogNotifier {
  readonly tools: readonly Tool[];
  /** One session over a transport of the SDK's (an in-memory pair, a socket of your own). */
  connect(transport: Transport): Promise<McpSession>;
  /** One session over this process's stdin and stdout; it ends when the client closes stdin. */
  serveStdio(options?: StdioServeOptions): Promise<McpSession>;
  /** Streamable HTTP at `/mcp`, on 127.0.0.1 by default, every request with the bearer token. */
  serveHttp(options?: HttpServeOptions): Promise<HttpServing>;
  /** Ends every session — closing the shells, browsers and processes their tools opened — and stops listening. */
  close(): Promise<void>;
}

const ownVersion = (): string => (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

/**
 * Serves `tools` over MCP: listed with their full JSON Schemas (and output schemas), called with
 * their own validation (bad arguments are an `isError` result saying what is wrong), results as MCP
 * content (text and images, or the tool's own parts: audio, resources, links; a structured result),
 * failures as `isError` results. A call's progress and log lines reach the client as notifications,
 * its `sample` and `elicit` questions go to the client. Throws if two tools share a name or one
 * takes (or gives) no object.
 */
export function createMcpServer(tools: readonly Tool[], options: McpServerOptions = {}): McpToolServer {
  const listing = listTools(tools);
  const byName = new Map(tools.map((tool) => [tool.spec.name, tool]));
  const onError = options.onError ?? (() => {});
  const sessions = new Set<McpSession>();
  const listeners = new Set<HttpServing>();
  const info = { name: options.name ?? 'openmanus', version: options.version ?? ownVersion() };
  const catalog = createCatalog(options);

  const connect = async (transport: Transport) => {
    const session = await openSession(transport, {
      info,
      ...(options.instructions !== undefined ? { instructions: options.instructions } : {}),
      tools: byName,
      listing,
      run: {
        ...(options.workspace !== undefined ? { workspace: options.workspace } : {}),
        ...(options.llm ? { llm: options.llm } : {}),
        ...(options.toolTimeoutMs !== undefined ? { toolTimeoutMs: options.toolTimeoutMs } : {}),
      },
      onError,
      ...(catalog.configure ? { configure: catalog.configure } : {}),
    });
    sessions.add(session);
    void session.closed.then(() => sessions.delete(session));
    return session;
  };

  return {
    tools,
    ...catalog.notifier,
    connect,
    serveStdio: (stdio = {}) => serveStdio(connect, stdio),
    async serveHttp(http = {}) {
      const serving = await serveHttp(connect, http, onError);
      listeners.add(serving);
      return {
        ...serving,
        close: async () => {
          listeners.delete(serving);
          await serving.close();
        },
      };
    },
    async close() {
      await Promise.allSettled([...listeners].map((serving) => serving.close()));
      listeners.clear();
      await Promise.allSettled([...sessions].map((session) => session.close()));
    },
  };
}
