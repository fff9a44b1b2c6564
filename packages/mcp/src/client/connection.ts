import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  type CallToolResult,
  type ClientCapabilities,
  ErrorCode,
  type Implementation,
  McpError,
  type Tool as McpTool,
  type Progress,
  type ServerCapabilities,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { ToolScope } from '@openmanus/core';
import { linkAbort } from '@openmanus/core/internal';
import { z } from 'zod';
import type { McpServerConfig } from './config.js';
import { createTransport, type OpenTransport, type TransportKind, transportKinds } from './transport.js';

export type { McpTool };

/** What a connection tells its owner. */
export interface ConnectionEvents {
  /** The connection ended without being closed by us (the process exited, the stream broke). */
  readonly onLost: (reason: string) => void;
  /** The server said its tool list changed. */
  readonly onToolsChanged: () => void;
  /** A stream of a remote server broke, or a request failed on the way: it may be gone (a ping tells). */
  readonly onBroken: (reason: string) => void;
}

/** One live session with one server. */
export interface McpConnection {
  readonly kind: TransportKind;
  /** What the server asks its clients to tell the model (`instructions` of its initialize result). */
  readonly instructions: string | undefined;
  /** The server declared that it says when its tools change (`tools.listChanged`). */
  readonly announcesToolChanges: boolean;
  /** What the server declared it serves (resources, prompts, logging, …). */
  readonly serverCapabilities: ServerCapabilities;
  /** When the server last sent a message (ms since the epoch). */
  heardAt(): number;
  /** The tools of every page of the server's list, unchecked (see `admitTools`). */
  listTools(timeoutMs: number, signal?: AbortSignal): Promise<unknown[]>;
  callTool(
    name: string,
    args: Record<string, unknown>,
    options: {
      readonly signal: AbortSignal;
      readonly timeoutMs: number;
      /** Sends a progress token with the call; the server's progress for it comes here. */
      readonly onProgress?: (progress: Progress) => void;
      /** The call's `scope.onPersonWait`: `timeoutMs` does not run while the server's request waits on a person. */
      readonly onPersonWait?: ToolScope['onPersonWait'];
    },
  ): Promise<CallToolResult>;
  /** Any other request of ours (resources, prompts), its answer checked by `schema`. */
  request<T>(
    request: { readonly method: string; readonly params?: Record<string, unknown> },
    schema: z.ZodType<T>,
    options: { readonly signal: AbortSignal; readonly timeoutMs: number },
  ): Promise<T>;
  /** Tells the server that our roots changed (`notifications/roots/list_changed`). */
  notifyRootsChanged(): Promise<void>;
  ping(timeoutMs: number): Promise<void>;
  /** Says goodbye and waits for the server (a stdio process) to end. */
  close(): Promise<void>;
  /** Ends a server that stopped answering, without waiting for it to agree. */
  abandon(): Promise<void>;
  /** Why the connection is gone, with what a stdio server last wrote to stderr. */
  describe(reason: string, known?: string): string;
}

export interface ConnectOptions {
  readonly clientInfo: Implementation;
  readonly timeoutMs: number;
  /** Aborts the attempt (the client is closing). */
  readonly signal: AbortSignal;
  readonly events: ConnectionEvents;
  /** What the client declares (elicitation, sampling, roots); default none. */
  readonly capabilities?: ClientCapabilities;
  /** Sets the handlers of the server's requests and notifications on the SDK client, before the handshake. */
  readonly install?: (client: Client) => void;
}

/** A page of a server's tool list, its tools still unchecked. */
const ToolPageSchema = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });

/** No server has this many pages of tools; a cursor that never ends must not loop forever. */
const MAX_TOOL_PAGES = 100;
/** How long a person may take to sign in (a sign-in of its own may give up sooner). */
const SIGN_IN_MS = 10 * 60_000;
/** How long a goodbye may take before the process is killed or the socket dropped. */
const GOODBYE_MS = 5_000;
/** The SDK always sets a timer on a request: for a call, whose deadline is ours, the longest a timer takes (24 days). */
const NO_SDK_TIMEOUT = 2 ** 31 - 1;

/**
 * Connects to a server: over stdio, SSE or streamable HTTP — for a url without a type, streamable
 * HTTP first and then SSE, as the MCP specification advises. Rejects with every attempt's reason.
 */
export async function openConnection(config: McpServerConfig, options: ConnectOptions): Promise<McpConnection> {
  const failures: string[] = [];
  const kinds = transportKinds(config);
  for (const kind of kinds) {
    try {
      return await connectWith(config, kind, options);
    } catch (error) {
      const reason = messageOf(error);
      failures.push(kinds.length > 1 ? `${kind === 'http' ? 'streamable HTTP' : 'SSE'}: ${reason}` : reason);
      if (options.signal.aborted) break;
    }
  }
  throw new Error(failures.join('; '));
}

async function connectWith(
  config: McpServerConfig,
  kind: TransportKind,
  options: ConnectOptions,
  signedIn = false,
): Promise<McpConnection> {
  let connected = false;
  let closing = false;
  const opened = createTransport(config, kind, (reason) => {
    if (connected && !closing) options.events.onBroken(reason);
  });
  const client = new Client(options.clientInfo, { capabilities: options.capabilities ?? {} });
  let lastError: string | undefined;
  /** `reason`, with the last error the SDK reported (unless it is `known`) and the end of the server's stderr. */
  const describe = (reason: string, known?: string) => {
    const details = [lastError === known ? undefined : lastError, opened.stderrTail()].filter(Boolean).join(' — ');
    return details ? `${reason}: ${details}` : reason;
  };
  client.onerror = (error) => {
    lastError = error.message;
  };
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => options.events.onToolsChanged());
  options.install?.(client);

  const end = async (kill: boolean) => {
    closing = true;
    if (kill) opened.kill();
    else await goodbye(opened);
    await Promise.allSettled([client.close()]);
    await within(opened.ended, GOODBYE_MS);
  };
  try {
    await withSignal(options.signal, (signal) =>
      deadline(client.connect(opened.transport, { timeout: options.timeoutMs, signal }), {
        ms: options.timeoutMs,
        signal,
        what: `did not complete the MCP handshake within ${options.timeoutMs} ms`,
      }),
    );
  } catch (error) {
    // A server that wants a sign-in: the person signs in — outside the handshake's deadline, they
    // may take a while — and the connection starts again with the tokens.
    if (error instanceof UnauthorizedError && opened.signIn && !signedIn) {
      await end(true);
      await deadline(opened.signIn(), {
        ms: SIGN_IN_MS,
        signal: options.signal,
        what: `no OAuth sign-in within ${SIGN_IN_MS / 60_000} minutes`,
      });
      return connectWith(config, kind, options, true);
    }
    // Described before the ending, whose own noise (a cancellation that cannot be sent) is no reason.
    const reason = describe(handshakeFailure(error, config), messageOf(error));
    await end(true);
    throw new Error(reason);
  }
  // Set after the handshake: a failed handshake is reported by the rejection, not as a loss.
  client.onclose = () => {
    if (!closing)
      options.events.onLost(describe(kind === 'stdio' ? 'the server process ended' : 'the connection closed'));
  };
  connected = true;

  return {
    kind,
    instructions: client.getInstructions(),
    announcesToolChanges: client.getServerCapabilities()?.tools?.listChanged === true,
    serverCapabilities: client.getServerCapabilities() ?? {},
    heardAt: opened.heardAt,
    async listTools(timeoutMs, signal) {
      const tools: unknown[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_TOOL_PAGES; page++) {
        // Not the SDK's listTools: it refuses a whole list for one bad tool, and compiles every
        // output schema (a deep one throws); its tools are checked one by one instead.
        const listed = await withSignal(signal, (own) =>
          client.request(
            { method: 'tools/list', ...(cursor === undefined ? {} : { params: { cursor } }) },
            ToolPageSchema,
            { timeout: timeoutMs, signal: own },
          ),
        );
        tools.push(...listed.tools);
        cursor = listed.nextCursor;
        if (cursor === undefined) break;
      }
      return tools;
    },
    async callTool(name, args, { signal, timeoutMs, onProgress, onPersonWait }) {
      // The call's deadline is ours, not the SDK's, which cannot stop: while the server's question or
      // sampling request waits on a person (minutes, maybe), the call is not late. The clock's signal
      // is made per call, so the listener the SDK leaves on it goes with it.
      const clock = linkAbort(signal, timeoutMs);
      const unwatch = onPersonWait?.(() => clock.pause());
      try {
        const requestOptions: RequestOptions = { signal: clock.signal, timeout: NO_SDK_TIMEOUT };
        if (onProgress) requestOptions.onprogress = onProgress;
        return (await client.callTool({ name, arguments: args }, undefined, requestOptions)) as CallToolResult;
      } catch (failure) {
        // As the SDK's own timeout reports it (the SDK has told the server the request is cancelled).
        if (clock.timedOut()) throw new McpError(ErrorCode.RequestTimeout, 'Request timed out', { timeout: timeoutMs });
        throw failure;
      } finally {
        unwatch?.();
        clock.dispose();
      }
    },
    request: (request, schema, { signal, timeoutMs }) =>
      withSignal(signal, (own) => client.request(request, schema, { signal: own, timeout: timeoutMs })),
    notifyRootsChanged: () => client.sendRootsListChanged(),
    async ping(timeoutMs) {
      await client.ping({ timeout: timeoutMs });
    },
    close: () => end(false),
    abandon: () => end(true),
    describe,
  };
}

/** A streamable HTTP session is ended with a DELETE, so the server can free it at once. */
async function goodbye(opened: OpenTransport): Promise<void> {
  if (!(opened.transport instanceof StreamableHTTPClientTransport) || !opened.transport.sessionId) return;
  await within(
    opened.transport.terminateSession().catch(() => undefined),
    GOODBYE_MS,
  );
}

function handshakeFailure(error: unknown, config: McpServerConfig): string {
  // The SDK's OAuth errors tell what the authorization server answered, not that a sign-in failed.
  if (error instanceof OAuthError) return `the OAuth sign-in failed: ${messageOf(error)}`;
  const code = (error as { code?: unknown }).code;
  if (code === 'ENOENT' && 'command' in config) return `could not start "${config.command}" (no such program)`;
  if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
    return 'command' in config
      ? 'the server process ended during the handshake'
      : 'the connection closed during the handshake';
  }
  return messageOf(error);
}

/** `promise`, or a rejection with `what` after `ms` or when `signal` aborts. */
async function deadline<T>(
  promise: Promise<T>,
  { ms, signal, what }: { ms: number; signal: AbortSignal; what: string },
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stop = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(what)), ms);
    onAbort = () => reject(new Error('the MCP client was closed'));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([promise, stop]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
    promise.catch(() => undefined);
  }
}

/**
 * Runs a request with a signal of its own, aborted when `outer` aborts: the SDK adds a listener to a
 * request's signal and never removes it, so a signal that outlives requests (the client's, a run's)
 * would gather one per request — a leak, and Node's MaxListenersExceededWarning after ten.
 */
async function withSignal<T>(outer: AbortSignal | undefined, request: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const own = new AbortController();
  const abort = () => own.abort(outer?.reason);
  if (outer?.aborted) abort();
  else outer?.addEventListener('abort', abort, { once: true });
  try {
    return await request(own.signal);
  } finally {
    outer?.removeEventListener('abort', abort);
  }
}

/** Waits for `promise`, but at most `ms`. */
async function within(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/** An error's message, with its cause's (fetch's "fetch failed" says why only there). */
export function messageOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause =
    error.cause instanceof Error ? ((error.cause as { code?: string }).code ?? error.cause.message) : undefined;
  return cause && !error.message.includes(cause) ? `${error.message} (${cause})` : error.message;
}
