import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TaskState } from '@a2a-js/sdk';
import { createAgent } from '@openmanus/core';
import { scriptedLlm } from '@openmanus/core/testing';
import { describe, expect, it } from 'vitest';
import { clientOf, onCleanup, rawRequest, send, serve, TOKEN, userMessage } from './helpers.js';

interface Delivery {
  readonly token: string | undefined;
  readonly body: { statusUpdate?: { status?: { state?: string } } };
}

/** A webhook on a free loopback port; `until` resolves with the deliveries once one matches. */
async function webhook() {
  const deliveries: Delivery[] = [];
  const waiting: (() => void)[] = [];
  const server = createServer((request: IncomingMessage, response) => {
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      text += chunk;
    });
    request.on('end', () => {
      const token = request.headers['x-a2a-notification-token'];
      deliveries.push({ token: typeof token === 'string' ? token : undefined, body: JSON.parse(text) });
      for (const wake of waiting.splice(0)) wake();
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const until = async (matches: (delivery: Delivery) => boolean) => {
    while (!deliveries.some(matches)) await new Promise<void>((wake) => waiting.push(wake));
    return deliveries;
  };
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, until };
}

const pushConfig = (url: string) => ({
  tenant: '',
  id: '',
  taskId: '',
  url,
  token: 'hook-token',
  authentication: undefined,
});

describe('push notifications', () => {
  it('with pushNotifications, each update of a task is posted to the webhook its client registered', async () => {
    const hook = await webhook();
    const { url } = await serve(createAgent({ name: 'geo' }), {
      llm: scriptedLlm([{ content: 'Paris.' }]),
      pushNotifications: true,
    });
    const client = await clientOf(url);
    expect((await client.getAgentCard()).capabilities?.pushNotifications).toBe(true);
    const task = await client.sendMessage({
      tenant: '',
      message: userMessage('What is the capital of France?'),
      configuration: {
        acceptedOutputModes: [],
        taskPushNotificationConfig: pushConfig(hook.url),
        historyLength: undefined,
        returnImmediately: false,
      },
      metadata: undefined,
    });
    expect('status' in task && task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const deliveries = await hook.until(({ body }) => body.statusUpdate?.status?.state === 'TASK_STATE_COMPLETED');
    expect(deliveries.every(({ token }) => token === 'hook-token')).toBe(true);
  });

  it('without it, the card offers none and the server refuses a webhook', async () => {
    const hook = await webhook();
    const { url } = await serve(createAgent({ name: 'geo' }), { llm: scriptedLlm([{ content: 'Paris.' }]) });
    const client = await clientOf(url);
    expect((await client.getAgentCard()).capabilities?.pushNotifications).toBe(false);
    const task = await send(client, userMessage('What is the capital of France?'));
    // Asked directly (the SDK's client would not even send it to an agent whose card offers none).
    const response = await rawRequest(`${url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'CreateTaskPushNotificationConfig',
        params: { taskId: task.id, url: hook.url, token: 'hook-token' },
      }),
    });
    expect(JSON.parse(response.body)).toMatchObject({ error: { message: expect.stringMatching(/not supported/i) } });
  });
});
