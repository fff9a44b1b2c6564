import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpSession } from './session.js';

export interface StdioServeOptions {
  /** Default: this process's stdin. */
  readonly stdin?: Readable;
  /** Default: this process's stdout, which then carries the protocol only (log to stderr). */
  readonly stdout?: Writable;
}

/**
 * One session over stdin/stdout, as an MCP client that spawned this process talks to it. When the
 * client closes our stdin (it is done), the session ends and its tools' resources are closed, so
 * the process can exit before the client resorts to signals.
 */
export async function serveStdio(
  connect: (transport: Transport) => Promise<McpSession>,
  options: StdioServeOptions,
): Promise<McpSession> {
  const stdin = options.stdin ?? process.stdin;
  const session = await connect(new StdioServerTransport(stdin, options.stdout ?? process.stdout));
  const end = () => void session.close();
  stdin.once('end', end);
  void session.closed.then(() => stdin.off('end', end));
  return session;
}
