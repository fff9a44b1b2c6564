import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AGENT_CARD_PATH, AgentCard, type SendMessageRequest, type Task } from '@a2a-js/sdk';
import { UnsupportedOperationError } from '@a2a-js/sdk/errors';
import {
  DefaultPushNotificationSender,
  DefaultRequestHandler,
  InMemoryPushNotificationStore,
  type ServerCallContext,
} from '@a2a-js/sdk/server';
import { jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import {
  type Agent,
  type ApprovalRule,
  type CheckpointStore,
  createMemoryStore,
  type LlmPort,
  withApprovals,
} from '@openmanus/core';
import express, { type Express } from 'express';
import { accessCheck, LOOPBACK_HOSTS, tokenOf } from './access.js';
import { agentCard, type CardOptions, JSON_RPC_PATH, REST_PATH } from './card.js';
import { type A2aRunOptions, RunExecutor } from './executor.js';

export type { A2aRunOptions };

import { RunTaskStore, type TaskFields, withTaskFields } from './tasks.js';

export interface A2aServerOptions {
  /** The model the agent's runs use. */
  readonly llm: LlmPort;
  /**
   * Where each task's run is checkpointed, under the task's id (default: in memory). A server
   * started later on the same store goes on with the tasks the last one left waiting.
   */
  readonly store?: CheckpointStore;
  /** The bearer token clients must send (at least 16 characters); default a new random one (see `token`). */
  readonly token?: string;
  /** Calls that wait for the client's approval: tool names, per tool `true` or a predicate on the arguments, or a function. */
  readonly approvals?: ApprovalRule;
  /** What the agent card says: name, description, version, skills, provider. */
  readonly card?: CardOptions;
  /**
   * The URL clients reach the server at, as the agent card gives it (behind a proxy, or mounted
   * under a path); default the address `listen` bound.
   */
  readonly url?: string;
  /** `Host` values answered besides the loopback ones (`127.0.0.1`, `localhost`, `[::1]`, any port) and `url`'s: `name` or `name:port`. */
  readonly allowedHosts?: readonly string[];
  /** `Origin`s of other sites' pages allowed to call; default none. */
  readonly allowedOrigins?: readonly string[];
  /** More options for every run (a workspace, tool timeouts, a sandbox). */
  readonly runOptions?: A2aRunOptions;
  /**
   * Post each task's updates to the webhooks its clients register (default off: the server then
   * sends requests to any URL a client with the token names). The registrations are kept in memory.
   */
  readonly pushNotifications?: boolean;
}

export interface A2aServer {
  /** The Express app serving the agent card and both transports, with the access checks in front. */
  readonly app: Express;
  /** The bearer token clients send as `Authorization: Bearer <token>`. */
  readonly token: string;
  /** The agent card as served now. */
  card(): AgentCard;
  /** Listens on its own `node:http` server (default port 0: a free one; host 127.0.0.1); resolves with the URL it listens at. */
  listen(port?: number, host?: string): Promise<string>;
  /** Waits until no run is in flight (each ended or paused). */
  idle(): Promise<void>;
  /** Stops its listener (runs in flight go on: wait with `idle` first). */
  close(): Promise<void>;
}

type HandlerArguments = ConstructorParameters<typeof DefaultRequestHandler>;

/**
 * The SDK's handler with two changes: the card is made when asked (its URL is known once the
 * server listens), and a message on a task whose run is in flight is refused before the SDK starts
 * anything for it (what it started would enter that run's stream and break it for its client).
 */
class RunRequestHandler extends DefaultRequestHandler {
  constructor(
    private readonly makeCard: () => AgentCard,
    private readonly working: (taskId: string) => boolean,
    tasks: HandlerArguments[1],
    executor: HandlerArguments[2],
    webhooks: HandlerArguments[4],
    sender: HandlerArguments[5],
  ) {
    super(makeCard(), tasks, executor, undefined, webhooks, sender);
  }

  override async getAgentCard(): Promise<AgentCard> {
    return this.makeCard();
  }

  override async sendMessage(params: SendMessageRequest, context: ServerCallContext) {
    this.refuseBusy(params);
    return super.sendMessage(params, context);
  }

  override async *sendMessageStream(params: SendMessageRequest, context: ServerCallContext) {
    this.refuseBusy(params);
    yield* super.sendMessageStream(params, context);
  }

  private refuseBusy({ message }: SendMessageRequest) {
    if (message?.taskId && this.working(message.taskId))
      throw new UnsupportedOperationError(
        `task ${message.taskId} is working: send the message when it asks for input (or cancel it)`,
      );
  }
}

const hostName = (host: string) => (host.includes(':') ? `[${host}]` : host);
const WILDCARDS = new Set(['0.0.0.0', '::', '[::]']);

/**
 * Serves `agent` as an A2A agent, on the protocol's official SDK: its card at
 * `/.well-known/agent-card.json`, JSON-RPC at `/a2a/jsonrpc` and HTTP+JSON at `/a2a/rest`. Each
 * task is a run checkpointed in `store`; a question or an approval puts the task in
 * `input-required` until the client's next message on it answers. Every request needs an allowed
 * `Host` and no foreign `Origin`; all but the card need the bearer token.
 */
export function serveA2a(agent: Agent, options: A2aServerOptions): A2aServer {
  const token = tokenOf(options.token);
  const served = options.approvals ? withApprovals(agent, options.approvals) : agent;
  const fields = new Map<string, TaskFields>();
  const store = withTaskFields(options.store ?? createMemoryStore(), (id) => fields.get(id));
  const executor = new RunExecutor({
    agent: served,
    llm: options.llm,
    store,
    runOptions: options.runOptions ?? {},
    fields,
  });
  // A task the SDK cancels itself (no run of it is in flight here): its run is cancelled too.
  const tasks = new RunTaskStore(served, store, async (task: Task) => {
    await executor.cancelStored(task.id);
  });
  const given = options.url?.replace(/\/+$/, '');
  /** Where `listen` bound, once it has. */
  let listening: string | undefined;
  const pushNotifications = options.pushNotifications === true;
  const card = () => agentCard(served, given ?? listening ?? 'http://127.0.0.1', options.card, { pushNotifications });
  const webhooks = pushNotifications ? new InMemoryPushNotificationStore() : undefined;
  const handler = new RunRequestHandler(
    card,
    (taskId) => executor.working(taskId),
    tasks,
    executor,
    webhooks,
    webhooks && new DefaultPushNotificationSender(webhooks),
  );

  const hosts = new Set<string>([...LOOPBACK_HOSTS, ...(options.allowedHosts ?? []).map((h) => h.toLowerCase())]);
  if (options.url) hosts.add(new URL(options.url).host.toLowerCase());
  const cardPath = `/${AGENT_CARD_PATH}`;
  const app = express();
  app.disable('x-powered-by');
  app.use(
    accessCheck(
      { token, hosts, origins: new Set(options.allowedOrigins ?? []) },
      (request) =>
        // The card says how to authenticate: it needs no token.
        request.method === 'GET' && request.path === cardPath,
    ),
  );

  // In the protocol's JSON form (the SDK's own card handler sends its objects as they are, and a
  // client then reads no security scheme from the card).
  app.get(cardPath, (_request, response) => {
    response.set('cache-control', 'no-cache').json(AgentCard.toJSON(card()));
  });
  const userBuilder = UserBuilder.noAuthentication;
  app.use(JSON_RPC_PATH, jsonRpcHandler({ requestHandler: handler, userBuilder }));
  app.use(REST_PATH, restHandler({ requestHandler: handler, userBuilder }));

  let own: Server | undefined;
  return {
    app,
    token,
    card,
    listen: async (port = 0, host = '127.0.0.1') => {
      const server = createServer(app);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      own = server;
      const bound = (server.address() as AddressInfo).port;
      if (!WILDCARDS.has(host)) hosts.add(hostName(host).toLowerCase());
      listening = `http://${WILDCARDS.has(host) ? '127.0.0.1' : hostName(host)}:${bound}`;
      return listening;
    },
    idle: () => executor.idle(),
    close: async () => {
      const server = own;
      if (!server) return;
      own = undefined;
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
