import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { LOG_LEVELS, type LogLevel, type RunItem } from '@openmanus/core';

/** What the SDK gives a request handler: the request's id, its signal, its `_meta`, a way to notify on its stream. */
export type RequestExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

const severity = (level: LogLevel) => LOG_LEVELS.indexOf(level);

/** Whether a line at `level` goes to a client that asked for `minimum` and up (nothing asked: every line). */
export const logged = (level: LogLevel, minimum: LogLevel | undefined) =>
  minimum === undefined || severity(level) >= severity(minimum);

/** A call's items as the client sees them: how they are taken, and when the last one has gone out. */
export interface CallNotifier {
  readonly onItem: (item: RunItem) => void;
  /** Resolves once every notification of the call is sent, so that none comes after its result. */
  flushed(): Promise<void>;
}

/**
 * Sends a tool call's progress (`notifications/progress`, with the request's `progressToken`; none
 * without one, and only rising values, as MCP requires) and its log lines at or above the session's
 * level (`notifications/message`) to the client, related to the call's request — over streamable
 * HTTP they go on the call's own stream. Items of a child run (a sub-agent's tools) stay inside.
 */
export function callNotifier(
  extra: RequestExtra,
  minimumLevel: () => LogLevel | undefined,
  onError: (error: Error) => void,
): CallNotifier {
  const token = extra._meta?.progressToken;
  let reached = Number.NEGATIVE_INFINITY;
  let sent = Promise.resolve();
  const send = (notification: ServerNotification) => {
    sent = sent
      .then(() => extra.sendNotification(notification))
      .catch((error: unknown) => onError(error instanceof Error ? error : new Error(String(error))));
  };
  return {
    onItem(item) {
      if (item.origin?.length) return;
      if (item.type === 'progress') {
        if (token === undefined || !(item.progress > reached)) return;
        reached = item.progress;
        const { progress, total, message } = item;
        send({
          method: 'notifications/progress',
          params: {
            progressToken: token,
            progress,
            ...(total !== undefined ? { total } : {}),
            ...(message !== undefined ? { message } : {}),
          },
        });
      } else if (item.type === 'log' && logged(item.level, minimumLevel())) {
        const { level, data, logger } = item;
        send({ method: 'notifications/message', params: { level, data, ...(logger !== undefined ? { logger } : {}) } });
      }
    },
    flushed: () => sent,
  };
}
