import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { type Message, Role, type SendMessageRequest, type StreamResponse, type Task } from '@a2a-js/sdk';
import {
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import type { Agent } from '@openmanus/core';
import { afterEach } from 'vitest';
import { type A2aServer, type A2aServerOptions, serveA2a } from '../src/index.js';

export const TOKEN = 'a2a-test-token-0123456789abcdef';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
/** Runs `cleanup` after the test, last registered first. */
export const onCleanup = (cleanup: () => Promise<void>) => cleanups.push(cleanup);

/** `agent` served on a free loopback port; stopped after the test, once its runs ended or paused. */
export async function serve(agent: Agent, options: A2aServerOptions): Promise<{ server: A2aServer; url: string }> {
  const server = serveA2a(agent, { token: TOKEN, ...options });
  const url = await server.listen();
  onCleanup(async () => {
    await server.idle();
    await server.close();
  });
  return { server, url };
}

/** The SDK's own client for the agent at `url`, sending `token` (over JSON-RPC, or HTTP+JSON when asked). */
export async function clientOf(url: string, token = TOKEN, transport: 'JSONRPC' | 'HTTP+JSON' = 'JSONRPC') {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
      preferredTransports: [transport],
    }),
  );
  return factory.createFromUrl(url);
}

/** A user's message: text, or a data part, on a task when `taskId` is given. */
export function userMessage(content: string | object, on: { taskId?: string; contextId?: string } = {}): Message {
  return {
    messageId: randomUUID(),
    taskId: on.taskId ?? '',
    contextId: on.contextId ?? '',
    role: Role.ROLE_USER,
    parts: [
      typeof content === 'string'
        ? { content: { $case: 'text', value: content }, mediaType: 'text/plain', filename: '', metadata: {} }
        : { content: { $case: 'data', value: content }, mediaType: 'application/json', filename: '', metadata: {} },
    ],
    metadata: {},
    extensions: [],
    referenceTaskIds: [],
  };
}

export const sendRequest = (message: Message): SendMessageRequest => ({
  tenant: '',
  message,
  configuration: undefined,
  metadata: undefined,
});

/** The task a blocking send resolved with (it is never a bare message here). */
export async function send(client: Client, message: Message): Promise<Task> {
  const result = await client.sendMessage(sendRequest(message));
  if (!('status' in result)) throw new Error('the agent answered with a message, not a task');
  return result;
}

/** The text of a message's text parts. */
export const textIn = (message: Message | undefined) =>
  (message?.parts ?? []).flatMap((part) => (part.content?.$case === 'text' ? [part.content.value] : [])).join('\n');

/** The first data part of a message. */
export const dataIn = (message: Message | undefined): Record<string, unknown> | undefined => {
  for (const part of message?.parts ?? []) if (part.content?.$case === 'data') return part.content.value;
  return undefined;
};

/** Every event of a stream, in order. */
export async function drain(events: AsyncIterable<StreamResponse>): Promise<NonNullable<StreamResponse['payload']>[]> {
  const seen: NonNullable<StreamResponse['payload']>[] = [];
  for await (const event of events) if (event.payload) seen.push(event.payload);
  return seen;
}

/** A raw HTTP request (node:http, so that the Host and Origin headers are ours to set). */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      { method: options.method ?? 'GET', headers: options.headers ?? {} },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      },
    );
    request.on('error', reject);
    request.end(options.body);
  });
}
