import type { ChildProcess } from 'node:child_process';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { boundedFetch } from './boundedFetch.js';
import type { McpServerConfig, RemoteServerConfig } from './config.js';
import { noticingScopeChallenges, signInOnUnauthorized } from './oauth/authorizing.js';
import { type McpOAuthProvider, oauthProvider } from './oauth/provider.js';

/** How a connection reaches its server. */
export type TransportKind = 'stdio' | 'http' | 'sse';

/** A transport of the SDK, with what we need beyond it. */
export interface OpenTransport {
  readonly kind: TransportKind;
  readonly transport: Transport;
  /** Settles when the transport has closed: for stdio, when the server process has ended. */
  readonly ended: Promise<void>;
  /** The end of what a stdio server wrote to stderr: why it failed, in its own words. */
  stderrTail(): string;
  /** Ends a stdio server at once (one that stopped answering would make a polite close wait seconds). */
  kill(): void;
  /** For a server with `auth`: the sign-in the SDK stopped at (its `UnauthorizedError`), then the code handed to it. */
  readonly signIn?: () => Promise<void>;
  /** When the server last sent a message (ms since the epoch). */
  heardAt(): number;
}

/** Told when a remote server's stream broke or a request to it failed on the way: is the server still there? */
export type OnStreamBroken = (reason: string) => void;

const STDERR_TAIL = 1_000;

/** The transports to try for a server, in order: a url without a type tries streamable HTTP, then SSE. */
export function transportKinds(config: McpServerConfig): readonly TransportKind[] {
  if (!('url' in config)) return ['stdio'];
  if (config.type === 'sse') return ['sse'];
  return config.type === undefined ? ['http', 'sse'] : ['http'];
}

/** A new, unstarted transport (the SDK's Client starts it). Set `onclose` is kept: the Client chains it. */
export function createTransport(config: McpServerConfig, kind: TransportKind, onBroken: OnStreamBroken): OpenTransport {
  const open =
    kind === 'stdio' ? stdioTransport(config) : remoteTransport(config as RemoteServerConfig, kind, onBroken);
  let ended: () => void = () => {};
  const endedPromise = new Promise<void>((resolve) => {
    ended = resolve;
  });
  open.transport.onclose = ended;
  let heard = Date.now();
  const onmessage = open.transport.onmessage;
  open.transport.onmessage = (message, extra) => {
    heard = Date.now();
    onmessage?.(message, extra);
  };
  return { ...open, kind, ended: endedPromise, heardAt: () => heard };
}

type Opened = Omit<OpenTransport, 'kind' | 'ended' | 'heardAt'>;

function stdioTransport(config: McpServerConfig): Opened {
  if ('url' in config) throw new TypeError('a stdio transport needs a command');
  const transport = new StdioClientTransport({
    command: config.command,
    ...(config.args ? { args: [...config.args] } : {}),
    // The SDK adds only HOME, LOGNAME, PATH, SHELL, TERM and USER: our own secrets stay ours.
    ...(config.env ? { env: { ...config.env } } : {}),
    ...(config.cwd ? { cwd: config.cwd } : {}),
    stderr: 'pipe',
  });
  let tail = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-STDERR_TAIL);
  });
  // The SDK forgets the pid once it begins closing; a kill must still reach the process.
  let pid: number | null = null;
  const kill = () => {
    if (pid === null) return;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // It has already ended.
    }
  };
  const start = transport.start.bind(transport);
  transport.start = async () => {
    await start();
    pid = transport.pid;
    // A server that closed its stdout can never answer again, though it lives on: the SDK would wait
    // for its exit, and each call for its time limit. It is ended, and so noticed at once. (The SDK
    // keeps the child private; while it closes the server itself, `pid` is null and the server is left
    // to end on its own.)
    const child = (transport as unknown as { _process?: ChildProcess })._process;
    child?.stdout?.once('end', () => {
      if (transport.pid !== null) kill();
    });
  };
  return { transport, stderrTail: () => tail.trim(), kill };
}

/**
 * Over HTTP, the SDK gives a request no answer when the stream that was to carry it breaks (the server
 * killed mid-call, a message over our limit): the call would wait for its time limit. So the requests
 * sent and not yet answered are known here, and those a broken stream was to answer are answered with
 * an error at once — over streamable HTTP the requests of that POST, over SSE every request (all
 * answers come on its one stream).
 */
function remoteTransport(config: RemoteServerConfig, kind: 'http' | 'sse', onBroken: OnStreamBroken): Opened {
  const url = new URL(config.url);
  const awaiting = new Set<RequestId>();
  let transport: StreamableHTTPClientTransport | SSEClientTransport;
  const fail = (ids: Iterable<RequestId>, error: Error) => {
    for (const id of [...ids]) {
      if (!awaiting.delete(id)) continue;
      const message = `the stream of its answer broke: ${error.message}`;
      transport.onmessage?.({ jsonrpc: '2.0', id, error: { code: ErrorCode.ConnectionClosed, message } });
    }
  };
  const bounded = boundedFetch({
    onBroken: (init, error, { answered, resumable, overLimit }) => {
      const ids = requestIds(init);
      if (!answered) for (const id of ids) awaiting.delete(id);
      // A stream with event ids is resumed by the SDK (if the server is gone, the resumption fails, and
      // the ping with it); one over the limit would only come again.
      else if (!resumable || overLimit) {
        if (kind === 'http') fail(ids, error);
        else if ((init?.method ?? 'GET') === 'GET') fail(awaiting, error);
      }
      onBroken(error.message);
    },
  });
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const ids = requestIds(init);
    for (const id of ids) awaiting.add(id);
    const response = await bounded(input, init);
    // Refused: the SDK fails the requests itself.
    if (!response.ok) for (const id of ids) awaiting.delete(id);
    return response;
  };
  const authProvider = config.auth ? providerOf(config) : undefined;
  const options = {
    fetch: authProvider ? noticingScopeChallenges(fetch, authProvider) : fetch,
    ...(config.headers ? { requestInit: { headers: { ...config.headers } } } : {}),
    ...(authProvider ? { authProvider } : {}),
  };
  transport = kind === 'sse' ? new SSEClientTransport(url, options) : new StreamableHTTPClientTransport(url, options);
  transport.onmessage = (message: JSONRPCMessage) => {
    if ('id' in message && !('method' in message) && message.id !== undefined) awaiting.delete(message.id);
  };
  const signIn = authProvider ? signInOnUnauthorized(transport, authProvider) : undefined;
  return { transport, stderrTail: () => '', kill: () => {}, ...(signIn ? { signIn } : {}) };
}

/** One OAuth client per server config, for all its connections: what it signed in to outlives a reconnect. */
const providers = new WeakMap<RemoteServerConfig, McpOAuthProvider>();
function providerOf(config: RemoteServerConfig): McpOAuthProvider {
  let provider = providers.get(config);
  if (!provider) {
    provider = oauthProvider(config.url, config.auth);
    providers.set(config, provider);
  }
  return provider;
}

/** The ids of the requests a POST carries (the SDK writes its messages as JSON text). */
function requestIds(init: RequestInit | undefined): RequestId[] {
  if (init?.method !== 'POST' || typeof init.body !== 'string') return [];
  try {
    const sent: unknown = JSON.parse(init.body);
    return (Array.isArray(sent) ? sent : [sent]).flatMap((message: { id?: unknown; method?: unknown }) =>
      typeof message?.method === 'string' && (typeof message.id === 'string' || typeof message.id === 'number')
        ? [message.id]
        : [],
    );
  } catch {
    return [];
  }
}
