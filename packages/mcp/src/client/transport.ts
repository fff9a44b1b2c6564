import type { ChildProcess } from 'node:child_process';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { boundedFetch } from './boundedFetch.js';
import type { McpServerConfig, RemoteServerConfig } from './config.js';

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
}

const STDERR_TAIL = 1_000;

/** The transports to try for a server, in order: a url without a type tries streamable HTTP, then SSE. */
export function transportKinds(config: McpServerConfig): readonly TransportKind[] {
  if (!('url' in config)) return ['stdio'];
  if (config.type === 'sse') return ['sse'];
  return config.type === undefined ? ['http', 'sse'] : ['http'];
}

/** A new, unstarted transport (the SDK's Client starts it). Set `onclose` is kept: the Client chains it. */
export function createTransport(config: McpServerConfig, kind: TransportKind): OpenTransport {
  const open = kind === 'stdio' ? stdioTransport(config) : remoteTransport(config as RemoteServerConfig, kind);
  let ended: () => void = () => {};
  const endedPromise = new Promise<void>((resolve) => {
    ended = resolve;
  });
  open.transport.onclose = ended;
  return { ...open, kind, ended: endedPromise };
}

function stdioTransport(config: McpServerConfig): Omit<OpenTransport, 'kind' | 'ended'> {
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

function remoteTransport(config: RemoteServerConfig, kind: 'http' | 'sse'): Omit<OpenTransport, 'kind' | 'ended'> {
  const url = new URL(config.url);
  const options = {
    fetch: boundedFetch(),
    ...(config.headers ? { requestInit: { headers: { ...config.headers } } } : {}),
  };
  const transport =
    kind === 'sse' ? new SSEClientTransport(url, options) : new StreamableHTTPClientTransport(url, options);
  return { transport, stderrTail: () => '', kill: () => {} };
}
