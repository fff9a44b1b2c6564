import {
  type CallToolResult,
  ErrorCode,
  type Implementation,
  McpError,
  type Root,
  UrlElicitationRequiredError,
} from '@modelcontextprotocol/sdk/types.js';
import { err, ok, type Result, type ToolScope } from '@openmanus/core';
import type { z } from 'zod';
import type { McpServerConfig } from './config.js';
import { type McpConnection, type McpTool, messageOf, openConnection } from './connection.js';
import {
  CallsInFlight,
  CLIENT_CAPABILITIES,
  installServerRequests,
  type ServerRequestFallbacks,
} from './serverRequests.js';
import { admitTools, type LeftOutTool } from './toolAdmission.js';
import type { TransportKind } from './transport.js';
import { openRequiredUrls } from './urlsRequired.js';

/** Where a server's connection stands: `reconnecting` is also a first connection that failed and is being retried. */
export type ServerState = 'idle' | 'connecting' | 'connected' | 'reconnecting' | 'closed';

export interface ServerStatus {
  readonly state: ServerState;
  readonly transport?: TransportKind;
  /** Why it is not connected (the last failure), while it is not. */
  readonly error?: string;
  /** Its tools while connected (tools that only run as tasks are left out: we cannot call them). */
  readonly tools: readonly McpTool[];
  /** Tools of its list we do not offer, and why (a schema too deep or too long, an invalid tool). */
  readonly leftOut: readonly LeftOutTool[];
  readonly instructions?: string;
  /** What the server serves besides tools, while connected. */
  readonly serves: { readonly resources: boolean; readonly prompts: boolean };
}

/** Waits between connection attempts: `initialDelayMs`, doubling up to `maxDelayMs`, for as long as the client is open. */
export interface ReconnectPolicy {
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
}

export type LinkEvent =
  | { readonly type: 'connected' }
  | { readonly type: 'connectFailed'; readonly error: string; readonly retryInMs: number }
  | { readonly type: 'disconnected'; readonly error: string; readonly retryInMs: number }
  | { readonly type: 'toolsListed' };

export interface ServerLinkOptions {
  readonly clientInfo: Implementation;
  readonly connectTimeoutMs: number;
  readonly callTimeoutMs: number;
  /** A remote server not heard from for this long is pinged before its tools are used again. */
  readonly idleCheckMs: number;
  readonly reconnect: ReconnectPolicy;
  readonly onEvent: (event: LinkEvent) => void;
  /** Who answers the server's questions and log lines that belong to no one call. */
  readonly requests: ServerRequestFallbacks;
  /** The roots the server gets when it asks (`roots/list`). */
  readonly roots: () => readonly Root[];
}

/** One configured server, kept connected: connects, lists its tools, calls them, reconnects with backoff. */
export interface ServerLink {
  status(): ServerStatus;
  /** The first connection attempt (once); settles when it has connected or failed. */
  start(): Promise<void>;
  /** Lists the tools again (while connected); a listing already under way is awaited. */
  refresh(): Promise<void>;
  /** Settles when no listing is under way (one started by `list_changed` included). */
  settled(): Promise<void>;
  /** Settles once a remote server idle for `idleCheckMs` has answered a ping, or been found gone. */
  ready(): Promise<void>;
  /**
   * Calls a tool for the call `scope`, which takes the server's progress, log lines and questions
   * meanwhile; every failure is a message for the model. Rejects only when the call's signal aborted it.
   */
  call(tool: string, args: Record<string, unknown>, scope: ToolScope): Promise<Result<CallToolResult, string>>;
  /** Any other request (resources, prompts), its answer checked by `schema`; failures as for `call`. */
  request<T>(
    request: { readonly method: string; readonly params?: Record<string, unknown> },
    schema: z.ZodType<T>,
    signal: AbortSignal,
  ): Promise<Result<T, string>>;
  /** Tells the server, if connected, that the roots changed. */
  notifyRootsChanged(): Promise<void>;
  close(): Promise<void>;
}

/** The most a check of a server that did not answer a call waits for its ping. */
export const PING_MS = 5_000;

export function createServerLink(id: string, config: McpServerConfig, options: ServerLinkOptions): ServerLink {
  const { callTimeoutMs, reconnect } = options;
  const closing = new AbortController();
  let state: ServerState = 'idle';
  let connection: McpConnection | undefined;
  let tools: McpTool[] = [];
  let leftOut: LeftOutTool[] = [];
  let error: string | undefined;
  /** Bumped by every attempt and every loss: events of an older connection are ignored. */
  let generation = 0;
  let failures = 0;
  let started: Promise<void> | undefined;
  let attempt: Promise<void> | undefined;
  let retry: NodeJS.Timeout | undefined;
  let listing: Promise<void> | undefined;
  let listAgain = false;
  let probing: Promise<void> | undefined;
  /** Connections being ended: `close` waits for them, so that no process outlives it. */
  const ending = new Set<Promise<void>>();
  /** Each connection's tool calls in flight, to which its server's questions and log lines go. */
  const inFlight = new WeakMap<McpConnection, CallsInFlight>();

  const end = (gone: McpConnection, kill: boolean) => {
    const ended = (kill ? gone.abandon() : gone.close()).catch(() => undefined);
    ending.add(ended);
    void ended.finally(() => ending.delete(ended));
  };

  const scheduleRetry = (): number => {
    const delay = Math.min(reconnect.maxDelayMs, reconnect.initialDelayMs * 2 ** failures);
    failures++;
    retry = setTimeout(() => {
      retry = undefined;
      attempt = connect();
    }, delay);
    retry.unref();
    return delay;
  };

  const connect = async (): Promise<void> => {
    const mine = ++generation;
    state = failures === 0 && state === 'idle' ? 'connecting' : 'reconnecting';
    let opened: McpConnection | undefined;
    // A change announced while the first list is under way may not be in it: list again once connected.
    let changedEarly = false;
    const calls = new CallsInFlight();
    try {
      opened = await openConnection(config, {
        clientInfo: options.clientInfo,
        capabilities: CLIENT_CAPABILITIES,
        install: (client) =>
          installServerRequests(client, { ...options.requests, server: id, calls, roots: options.roots }),
        timeoutMs: options.connectTimeoutMs,
        signal: closing.signal,
        events: {
          onLost: (reason) => {
            if (mine === generation) lose(reason);
          },
          onToolsChanged: () => {
            if (mine !== generation) return;
            if (connection) void refresh();
            else changedEarly = true;
          },
          onBroken: (reason) => {
            if (mine === generation && connection) void probe(connection, `a stream broke (${reason})`);
          },
        },
      });
      const listed = await opened.listTools(callTimeoutMs, closing.signal);
      if (closing.signal.aborted || mine !== generation) throw new Error('superseded');
      connection = opened;
      inFlight.set(opened, calls);
      ({ tools, leftOut } = admitTools(listed));
      state = 'connected';
      error = undefined;
      failures = 0;
      options.onEvent({ type: 'connected' });
      if (changedEarly) void refresh();
    } catch (failure) {
      if (opened) end(opened, true);
      if (closing.signal.aborted || mine !== generation) return;
      state = 'reconnecting';
      error = opened ? opened.describe(`listing its tools failed: ${messageOf(failure)}`) : messageOf(failure);
      options.onEvent({ type: 'connectFailed', error, retryInMs: scheduleRetry() });
    }
  };

  /** The connection is gone: its tools go with it, and a new one is tried after a pause. */
  function lose(reason: string): void {
    const gone = connection;
    if (!gone || closing.signal.aborted) return;
    connection = undefined;
    generation++;
    tools = [];
    leftOut = [];
    state = 'reconnecting';
    error = reason;
    end(gone, true);
    options.onEvent({ type: 'disconnected', error: reason, retryInMs: scheduleRetry() });
  }

  /** After a request failed: is the server still there? A timed-out one must answer a ping. */
  async function check(conn: McpConnection, failure: unknown): Promise<void> {
    if (failure instanceof McpError && failure.code !== ErrorCode.ConnectionClosed) {
      if (failure.code !== ErrorCode.RequestTimeout) return;
      try {
        await conn.ping(Math.min(PING_MS, callTimeoutMs));
        return;
      } catch {
        if (conn === connection) lose(`it stopped answering (no reply within ${callTimeoutMs} ms, not even to a ping)`);
        return;
      }
    }
    if (conn === connection) lose(conn.describe(`the connection failed: ${messageOf(failure)}`));
  }

  /** Is a server we have doubts about (`why`) still there? One that does not answer a ping is lost. */
  function probe(conn: McpConnection, why: string): Promise<void> {
    probing ??= (async () => {
      try {
        await conn.ping(Math.min(PING_MS, callTimeoutMs));
      } catch (failure) {
        const known = failure instanceof Error ? failure.message : undefined;
        if (conn === connection)
          lose(conn.describe(`${why}, and it did not answer a ping: ${messageOf(failure)}`, known));
      }
    })().finally(() => {
      probing = undefined;
    });
    return probing;
  }

  function notConnected(): string {
    const why = error ? ` (${error})` : '';
    return `the MCP server "${id}" is not connected${why}; its tools are back once it reconnects`;
  }

  function refresh(): Promise<void> {
    if (listing) {
      listAgain = true;
      return listing;
    }
    listing = (async () => {
      do {
        listAgain = false;
        const conn = connection;
        if (!conn) return;
        try {
          const listed = await conn.listTools(callTimeoutMs, closing.signal);
          if (conn !== connection) return;
          ({ tools, leftOut } = admitTools(listed));
          options.onEvent({ type: 'toolsListed' });
        } catch (failure) {
          await check(conn, failure);
        }
      } while (listAgain);
    })().finally(() => {
      listing = undefined;
    });
    return listing;
  }

  return {
    status: () => ({
      state,
      ...(connection ? { transport: connection.kind } : {}),
      ...(error !== undefined && state !== 'connected' ? { error } : {}),
      tools,
      leftOut,
      ...(connection?.instructions ? { instructions: connection.instructions } : {}),
      serves: {
        resources: connection?.serverCapabilities.resources !== undefined,
        prompts: connection?.serverCapabilities.prompts !== undefined,
      },
    }),
    start() {
      if (state === 'closed') return Promise.resolve();
      started ??= attempt = connect();
      return started;
    },
    refresh,
    settled: async () => {
      while (listing) await listing;
    },
    async ready() {
      const conn = connection;
      // A stdio server's end is noticed at once (its process, its stdout); a remote one may vanish unheard.
      if (!conn || conn.kind === 'stdio' || Date.now() - conn.heardAt() < options.idleCheckMs) return;
      await probe(conn, `it was idle for ${Date.now() - conn.heardAt()} ms`);
    },
    async call(tool, args, scope) {
      const conn = connection;
      if (!conn) return err(notConnected());
      const { signal } = scope;
      const calls = inFlight.get(conn);
      const done = calls?.add(scope);
      try {
        // A server that answers "open these URLs first" is called again once the person has.
        for (let attempt = 1; ; attempt++) {
          try {
            const result = await conn.callTool(tool, args, {
              signal,
              timeoutMs: callTimeoutMs,
              onProgress: (progress) => calls?.progress(scope, progress),
              ...(scope.onPersonWait ? { onPersonWait: scope.onPersonWait } : {}),
            });
            // Over streamable HTTP, list_changed comes on another stream than the result, maybe after the
            // next request has gone out: a server that announces changes is listed again at once (the next
            // step waits for it, `settled`), in case the call changed its tools.
            if (conn.kind === 'http' && conn.announcesToolChanges && conn === connection) void refresh();
            return ok(result);
          } catch (failure) {
            if (signal.aborted) throw failure;
            if (failure instanceof UrlElicitationRequiredError && attempt === 1) {
              const refused = await openRequiredUrls(failure, scope, id);
              if (refused === undefined) continue;
              return err(refused);
            }
            await check(conn, failure);
            return err(describeCallFailure(id, failure, callTimeoutMs, conn === connection ? undefined : error));
          }
        }
      } finally {
        done?.();
      }
    },
    async request(request, schema, signal) {
      const conn = connection;
      if (!conn) return err(notConnected());
      try {
        return ok(await conn.request(request, schema, { signal, timeoutMs: callTimeoutMs }));
      } catch (failure) {
        if (signal.aborted) throw failure;
        await check(conn, failure);
        return err(describeCallFailure(id, failure, callTimeoutMs, conn === connection ? undefined : error));
      }
    },
    async notifyRootsChanged() {
      await connection?.notifyRootsChanged().catch(() => undefined);
    },
    async close() {
      if (state === 'closed') return;
      state = 'closed';
      error = 'the MCP client was closed';
      closing.abort();
      clearTimeout(retry);
      const conn = connection;
      connection = undefined;
      tools = [];
      leftOut = [];
      if (conn) end(conn, false);
      await Promise.allSettled([attempt, ...ending]);
      // An attempt that was under way has queued its own ending meanwhile.
      await Promise.allSettled([...ending]);
    },
  };
}

function describeCallFailure(id: string, failure: unknown, timeoutMs: number, lost: string | undefined): string {
  const server = `the MCP server "${id}"`;
  if (lost !== undefined) {
    return `${server} was lost during the call: ${lost}; its tools are withdrawn until it reconnects`;
  }
  if (failure instanceof McpError) {
    if (failure.code === ErrorCode.RequestTimeout) return `${server} did not answer within ${timeoutMs} ms`;
    return `${server} answered with an error: ${failure.message}`;
  }
  return `${server} could not be reached: ${messageOf(failure)}`;
}
