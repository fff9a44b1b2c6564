import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Implementation, Root } from '@modelcontextprotocol/sdk/types.js';
import {
  type ContextGatherer,
  type ContextProvider,
  describeConfigError,
  type RunScope,
  type Tool,
} from '@openmanus/core';
import { type CatalogTool, catalogTools } from './catalogTools.js';
import { type CallMcpTool, mcpClientTool } from './clientTools.js';
import { type McpServers, parseMcpServers } from './config.js';
import { type McpContext, mcpContextProvider } from './context.js';
import { mcpToolName, uniqueToolName } from './naming.js';
import { changeView, type RunView, type ViewedTool } from './runView.js';
import {
  createServerLink,
  type LinkEvent,
  PING_MS,
  type ReconnectPolicy,
  type ServerLink,
  type ServerState,
} from './serverLink.js';
import type { ServerRequestFallbacks } from './serverRequests.js';
import type { LeftOutTool } from './toolAdmission.js';
import type { TransportKind } from './transport.js';

/** A directory the servers may work in: a path (made absolute) with an optional name. */
export type McpRoot = string | { readonly path: string; readonly name?: string };

export interface McpClientOptions extends ServerRequestFallbacks {
  /** The servers by id, from code or `loadMcpConfig()`. */
  readonly servers: McpServers;
  /**
   * How long a tool call may take before it fails with a clear error (default 60 s), not counting
   * the time its server's questions and sampling requests wait on a person (`onElicitation`, `onSampling`).
   */
  readonly callTimeoutMs?: number;
  /** How long connecting and the MCP handshake may take (default 60 s: `npx` may have to install the server). */
  readonly connectTimeoutMs?: number;
  /**
   * A server over HTTP or SSE not heard from for this long is pinged before the next step offers its
   * tools (default 30 s): one that died unheard — no stream of it open to break — is found out then,
   * and its tools withdrawn, rather than at the model's call.
   */
  readonly idleCheckMs?: number;
  /** The pause before reconnecting a server that failed or died (default 1 s, doubling up to 30 s). */
  readonly reconnect?: Partial<ReconnectPolicy>;
  /** How the client introduces itself to servers. */
  readonly clientInfo?: Implementation;
  /** The roots servers get for `roots/list`, as file:// URIs (default none); `setRoots` changes them. */
  readonly roots?: readonly McpRoot[];
  /**
   * Tools for the resources and prompts of servers that declare them (default true):
   * `mcp_{server}_list_resources`, `…_read_resource`, `…_list_prompts`, `…_get_prompt`.
   */
  readonly resourceTools?: boolean;
}

/** A server as the client sees it now. */
export interface McpServerStatus {
  readonly state: ServerState;
  readonly transport?: TransportKind;
  /** Why it is not connected, while it is not. */
  readonly error?: string;
  /** Its tools, by the names the model knows them by. */
  readonly tools: readonly string[];
  /** Tools of its list that are not offered, by their own names, and why (a schema too deep or too long, an invalid tool). */
  readonly leftOut: readonly LeftOutTool[];
  readonly instructions?: string;
}

/** What happens to the client's servers, for hosts that show it (a CLI's status line) or wait for it. */
export type McpClientEvent =
  | { readonly type: 'connected'; readonly server: string; readonly tools: readonly string[] }
  | { readonly type: 'toolsChanged'; readonly server: string; readonly tools: readonly string[] }
  | { readonly type: 'connectFailed'; readonly server: string; readonly error: string; readonly retryInMs: number }
  | { readonly type: 'disconnected'; readonly server: string; readonly error: string; readonly retryInMs: number };

export interface McpContextOptions {
  /** The context provider's name (default `mcp`); two clients on one agent need two names. */
  readonly name?: string;
  /** Lists every server's tools again every this many steps of a run (default 5, as OpenManus's MCPAgent). */
  readonly refreshEvery?: number;
}

/**
 * Connections to MCP servers, owned by whoever made the client: they live until `close()`, across
 * any number of runs and agents (OpenManus dropped them after every run, and shared its sessions
 * between all instances).
 */
export interface McpClient {
  readonly serverIds: readonly string[];
  /** Connects the servers (once); settles when each has connected or failed — failed ones are retried in the background. */
  connect(): Promise<void>;
  /** The connected servers' tools now, named `mcp_{server}_{tool}` for the model. */
  tools(): readonly Tool[];
  status(): Readonly<Record<string, McpServerStatus>>;
  /** Lists every connected server's tools again. */
  refresh(): Promise<void>;
  /** Replaces the roots and tells every connected server (`notifications/roots/list_changed`). */
  setRoots(roots: readonly McpRoot[]): Promise<void>;
  /** Calls `listener` with every event of the servers; returns the way to stop. */
  subscribe(listener: (event: McpClientEvent) => void): () => void;
  /**
   * The context provider and gatherer that keep a run's tools in step with this client: before each
   * step, the run gets the servers' tools as they are now (`scope.changeTools`), their instructions,
   * and a note of what changed. `withMcp` puts them on an agent.
   */
  context(options?: McpContextOptions): { readonly provider: ContextProvider; readonly gatherer: ContextGatherer };
  /** Disconnects every server at once; settles when they are gone (no process left), and never rejects. */
  close(): Promise<void>;
}

interface CatalogueEntry extends ViewedTool {
  readonly tool: Tool;
}

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_IDLE_CHECK_MS = 30_000;

export function createMcpClient(options: McpClientOptions): McpClient {
  const parsed = parseMcpServers(options.servers);
  if (!parsed.isOk()) throw new TypeError(describeConfigError(parsed.error));
  const callTimeoutMs = options.callTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  // Our own limit on a call is beyond the client's (and its check of the server), so the client's message wins.
  const toolTimeoutMs = callTimeoutMs + PING_MS + 1_000;
  const listeners = new Set<(event: McpClientEvent) => void>();
  /** Names given so far, by server and tool: a tool keeps its name while the client lives, even across reconnects. */
  const names = new Map<string, string>();
  const taken = new Set<string>();
  let catalogue = new Map<string, CatalogueEntry>();
  let connecting: Promise<void> | undefined;
  let roots = rootsOf(options.roots ?? []);
  const { onElicitation, onSampling, onLog } = options;
  const requests: ServerRequestFallbacks = {
    ...(onElicitation ? { onElicitation } : {}),
    ...(onSampling ? { onSampling } : {}),
    ...(onLog ? { onLog } : {}),
  };

  /** A tool's name for good; our catalogue tools are keyed apart from the server's, so a server's `list_resources` is another tool. */
  const nameOf = (server: string, tool: string, ours = false) => {
    const key = JSON.stringify(ours ? [server, tool, 'catalogue'] : [server, tool]);
    let name = names.get(key);
    if (name === undefined) {
      name = uniqueToolName(mcpToolName(server, tool), taken);
      names.set(key, name);
      taken.add(name);
    }
    return name;
  };

  const links = new Map<string, ServerLink>(
    Object.entries(parsed.value).map(([id, config]) => [
      id,
      createServerLink(id, config, {
        clientInfo: options.clientInfo ?? { name: 'openmanus', version: '0.1.0' },
        connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_TIMEOUT_MS,
        callTimeoutMs,
        idleCheckMs: options.idleCheckMs ?? DEFAULT_IDLE_CHECK_MS,
        reconnect: { initialDelayMs: 1_000, maxDelayMs: 30_000, ...options.reconnect },
        onEvent: (event) => onLinkEvent(id, event),
        requests,
        roots: () => roots,
      }),
    ]),
  );

  /** The tools of every connected server, in the order of the config and of each server's list. */
  function rebuild(): Map<string, CatalogueEntry> {
    const next = new Map<string, CatalogueEntry>();
    for (const [server, link] of links) {
      for (const remote of link.status().tools) {
        const name = nameOf(server, remote.name);
        const call: CallMcpTool = (tool, args, scope) => link.call(tool, args, scope);
        const tool = mcpClientTool(server, remote, name, { call, timeoutMs: toolTimeoutMs });
        next.set(name, { server, fingerprint: JSON.stringify(tool.spec), tool });
      }
      const { state, serves } = link.status();
      if (state !== 'connected' || options.resourceTools === false) continue;
      const named = (part: CatalogTool) => nameOf(server, part, true);
      for (const tool of catalogTools(server, serves, link.request, named, toolTimeoutMs)) {
        next.set(tool.spec.name, { server, fingerprint: JSON.stringify(tool.spec), tool });
      }
    }
    return next;
  }

  const toolsOf = (entries: ReadonlyMap<string, CatalogueEntry>, server: string) =>
    [...entries].filter(([, entry]) => entry.server === server);

  function onLinkEvent(server: string, event: LinkEvent): void {
    const before = catalogue;
    catalogue = rebuild();
    const tools = toolsOf(catalogue, server).map(([name]) => name);
    const fingerprints = (entries: ReadonlyMap<string, CatalogueEntry>) =>
      JSON.stringify(toolsOf(entries, server).map(([name, entry]) => [name, entry.fingerprint]));
    if (event.type === 'toolsListed') {
      if (fingerprints(before) !== fingerprints(catalogue)) emit({ type: 'toolsChanged', server, tools });
    } else if (event.type === 'connected') emit({ type: 'connected', server, tools });
    else emit({ ...event, server });
  }

  function emit(event: McpClientEvent): void {
    for (const listener of listeners) {
      try {
        listener(event);
      } catch {
        // A listener's failure is its own; the connections go on.
      }
    }
  }

  const connect = () => {
    connecting ??= Promise.all([...links.values()].map((link) => link.start())).then(() => undefined);
    return connecting;
  };
  const refresh = () => Promise.all([...links.values()].map((link) => link.refresh())).then(() => undefined);

  function context({ name = 'mcp', refreshEvery = 5 }: McpContextOptions = {}) {
    if (!Number.isInteger(refreshEvery) || refreshEvery < 1) {
      throw new RangeError(`refreshEvery must be a positive integer, got ${refreshEvery}`);
    }
    // One view per run, found by the run's signal (the same object for every step of a run).
    const runs = new WeakMap<AbortSignal, { view?: RunView; gathers: number }>();
    const gatherer = async (scope: RunScope): Promise<McpContext> => {
      let run = runs.get(scope.signal);
      if (!run) {
        run = { gathers: 0 };
        runs.set(scope.signal, run);
      }
      run.gathers++;
      await connect();
      if (run.gathers % refreshEvery === 0) await refresh();
      await Promise.all([...links.values()].map((link) => link.ready()));
      await Promise.all([...links.values()].map((link) => link.settled()));
      const now = catalogue;
      const servers = [...links].map(([id, link]) => {
        const { state, error, leftOut } = link.status();
        return { id, state, leftOut, ...(error !== undefined ? { error } : {}) };
      });
      const change = changeView(run.view, now, servers, taken);
      if (change.add.length > 0 || change.remove.length > 0) {
        const add = change.add.flatMap((added) => now.get(added)?.tool ?? []);
        await scope.changeTools({ add, remove: change.remove });
      }
      run.view = change.view;
      const instructions = [...links].flatMap(([server, link]) => {
        const { state, instructions: text } = link.status();
        return state === 'connected' && text ? [{ server, text }] : [];
      });
      return { instructions, notes: change.notes };
    };
    return { provider: mcpContextProvider(name), gatherer };
  }

  return {
    serverIds: [...links.keys()],
    connect,
    tools: () => [...catalogue.values()].map((entry) => entry.tool),
    status: () =>
      Object.fromEntries(
        [...links].map(([id, link]) => {
          const { tools: _remote, serves: _serves, ...status } = link.status();
          return [id, { ...status, tools: toolsOf(catalogue, id).map(([name]) => name) }];
        }),
      ),
    refresh,
    async setRoots(next) {
      roots = rootsOf(next);
      await Promise.all([...links.values()].map((link) => link.notifyRootsChanged()));
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    context,
    async close() {
      await Promise.allSettled([...links.values()].map((link) => link.close()));
      catalogue = new Map();
    },
  };
}

/** Roots as MCP has them: file:// URIs of absolute paths. */
function rootsOf(roots: readonly McpRoot[]): Root[] {
  return roots.map((root) => {
    const { path, name } = typeof root === 'string' ? { path: root, name: undefined } : root;
    return { uri: pathToFileURL(resolve(path)).href, ...(name !== undefined ? { name } : {}) };
  });
}
