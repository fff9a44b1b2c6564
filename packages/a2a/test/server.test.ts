import { mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { askHuman, createAgent, createFileStore, createMemoryStore, defineTool } from '@openmanus/core';
import { scriptedLlm } from '@openmanus/core/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  clientOf,
  dataIn,
  drain,
  onCleanup,
  rawRequest,
  send,
  sendRequest,
  serve,
  TOKEN,
  textIn,
  userMessage,
} from './helpers.js';

const deployed: string[] = [];
const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys a service',
  parameters: z.object({ service: z.string() }),
  execute: async ({ service }) => {
    deployed.push(service);
    return `deployed ${service}`;
  },
});

const opsAgent = () => createAgent({ name: 'ops', description: 'Deploys services', tools: [deploy, askHuman] });
const deployScript = () =>
  scriptedLlm([{ toolCalls: [{ name: 'deploy', arguments: { service: 'api' } }] }, { content: 'Deployed the api.' }]);

/** The last tool message the model was sent: what it saw of a call. */
const lastToolMessage = (llm: ReturnType<typeof scriptedLlm>) =>
  llm.requests.at(-1)?.messages.findLast((message) => message.role === 'tool')?.content;

describe('serveA2a', () => {
  it('serves the agent card: name, description, skills from the tools, streaming, its URL, bearer auth', async () => {
    const { url } = await serve(opsAgent(), { llm: deployScript() });
    const card = await (await clientOf(url)).getAgentCard();
    expect(card).toMatchObject({
      name: 'ops',
      description: 'Deploys services',
      capabilities: { streaming: true },
      supportedInterfaces: [
        { url: `${url}/a2a/jsonrpc`, protocolBinding: 'JSONRPC' },
        { url: `${url}/a2a/rest`, protocolBinding: 'HTTP+JSON' },
      ],
    });
    expect(card.skills.map((skill) => skill.id)).toEqual(['deploy', 'ask_human']);
    expect(card.securitySchemes.bearer?.scheme).toMatchObject({ $case: 'httpAuthSecurityScheme' });
  });

  it('message/send runs a task to completed, with the answer as its status message and artifact', async () => {
    const llm = scriptedLlm([{ content: 'Paris.' }]);
    const { url } = await serve(createAgent({ name: 'geo' }), { llm });
    const task = await send(await clientOf(url), userMessage('What is the capital of France?'));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textIn(task.status?.message)).toBe('Paris.');
    expect(task.artifacts).toMatchObject([{ artifactId: 'answer', parts: [{ content: { value: 'Paris.' } }] }]);
    expect(llm.requests[0]?.messages.at(-1)?.content).toContain('What is the capital of France?');
  });

  it('message/stream: the task, working with each tool call and result, the answer artifact, completed', async () => {
    const { url } = await serve(opsAgent(), { llm: deployScript() });
    const client = await clientOf(url, TOKEN, 'HTTP+JSON');
    const events = await drain(client.sendMessageStream(sendRequest(userMessage('deploy the api'))));
    expect(events[0]).toMatchObject({ $case: 'task', value: { status: { state: TaskState.TASK_STATE_SUBMITTED } } });
    const updates = events.flatMap((event) => (event.$case === 'statusUpdate' ? [event.value] : []));
    expect(updates.map((update) => textIn(update.status?.message)).filter(Boolean)).toEqual([
      'Calling deploy({"service":"api"})',
      'deploy returned: deployed api',
      'Deployed the api.',
    ]);
    expect(dataIn(updates[1]?.status?.message)).toMatchObject({ kind: 'toolCall', tool: 'deploy' });
    expect(updates.at(-1)?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(updates.slice(0, -1).every((update) => update.status?.state === TaskState.TASK_STATE_WORKING)).toBe(true);
    const artifact = events.find((event) => event.$case === 'artifactUpdate');
    expect(artifact?.value).toMatchObject({ artifact: { artifactId: 'answer' } });
  });

  it("ask_human puts the task in input-required; the client's next message on it answers, and the task completes", async () => {
    const llm = scriptedLlm([
      { toolCalls: [{ name: 'ask_human', arguments: { inquire: 'Which service?' } }] },
      (request) => ({ content: `Deploying ${request.messages.at(-1)?.content}.` }),
    ]);
    const { url } = await serve(opsAgent(), { llm });
    const client = await clientOf(url);
    const asked = await send(client, userMessage('deploy something'));
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(textIn(asked.status?.message)).toContain('Which service?');
    expect(dataIn(asked.status?.message)).toMatchObject({ kind: 'question', question: 'Which service?' });

    const done = await send(client, userMessage('the api', { taskId: asked.id, contextId: asked.contextId }));
    expect(done).toMatchObject({ id: asked.id, contextId: asked.contextId });
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textIn(done.status?.message)).toBe('Deploying the api.');
  });

  it('an approval puts the task in input-required; "yes" runs the call, and a reply that decides nothing asks again', async () => {
    deployed.length = 0;
    const { url } = await serve(opsAgent(), { llm: deployScript(), approvals: ['deploy'] });
    const client = await clientOf(url);
    const asked = await send(client, userMessage('deploy the api'));
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(dataIn(asked.status?.message)).toMatchObject({ kind: 'approval', tool: 'deploy', args: { service: 'api' } });
    expect(deployed).toEqual([]);

    const on = { taskId: asked.id, contextId: asked.contextId };
    const unclear = await send(client, userMessage('hmm, maybe', on));
    expect(unclear.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(textIn(unclear.status?.message)).toContain('does not answer');
    expect(deployed).toEqual([]);

    const done = await send(client, userMessage('yes', on));
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(deployed).toEqual(['api']);
  });

  it('a data part {approved: false, reason} denies the call: the tool never runs and the model is told why', async () => {
    deployed.length = 0;
    const llm = scriptedLlm([
      { toolCalls: [{ name: 'deploy', arguments: { service: 'api' } }] },
      { content: 'Not deployed.' },
    ]);
    const { url } = await serve(opsAgent(), { llm, approvals: ['deploy'] });
    const client = await clientOf(url);
    const asked = await send(client, userMessage('deploy the api'));
    const done = await send(
      client,
      userMessage({ approved: false, reason: 'not on a Friday' }, { taskId: asked.id, contextId: asked.contextId }),
    );
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(deployed).toEqual([]);
    expect(lastToolMessage(llm)).toContain('not on a Friday');
  });

  it('cancelTask stops the run in flight: the task is canceled, the tool sees the abort, the run is recorded cancelled', async () => {
    let aborted = false;
    const wait = defineTool({
      name: 'wait',
      description: 'Waits until stopped',
      parameters: z.object({}),
      execute: (_args, scope) =>
        new Promise<string>((resolve) => {
          scope.signal.addEventListener('abort', () => {
            aborted = true;
            resolve('stopped');
          });
        }),
    });
    const store = createMemoryStore();
    const llm = scriptedLlm([{ toolCalls: [{ name: 'wait', arguments: {} }] }]);
    const { url } = await serve(createAgent({ name: 'waiter', tools: [wait] }), { llm, store });
    const client = await clientOf(url);
    const states: TaskState[] = [];
    let taskId = '';
    for await (const event of client.sendMessageStream(sendRequest(userMessage('wait')))) {
      const payload = event.payload;
      if (payload?.$case === 'task') taskId = payload.value.id;
      if (payload?.$case !== 'statusUpdate') continue;
      states.push(payload.value.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED);
      if (textIn(payload.value.status?.message).startsWith('Calling wait')) {
        const cancelled = await client.cancelTask({ tenant: '', id: taskId, metadata: undefined });
        expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      }
    }
    expect(states.at(-1)).toBe(TaskState.TASK_STATE_CANCELED);
    expect(aborted).toBe(true);
    const saved = await store.load(taskId);
    expect(saved?.state).toMatchObject({ status: 'finished', finishReason: 'cancelled' });
    expect((await client.getTask({ tenant: '', id: taskId, historyLength: undefined })).status?.state).toBe(
      TaskState.TASK_STATE_CANCELED,
    );
  });

  it('cancelTask on a task waiting for input records its run cancelled', async () => {
    const store = createMemoryStore();
    const { url } = await serve(opsAgent(), { llm: deployScript(), approvals: ['deploy'], store });
    const client = await clientOf(url);
    const asked = await send(client, userMessage('deploy the api'));
    const cancelled = await client.cancelTask({ tenant: '', id: asked.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await store.load(asked.id))?.state).toMatchObject({ status: 'finished', finishReason: 'cancelled' });
  });

  it('refuses a request without the token, or with a wrong one (401), before any run starts', async () => {
    const store = createMemoryStore();
    const llm = deployScript();
    const { url } = await serve(opsAgent(), { llm, store });
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'deploy the api' }] } },
    });
    const headers = { 'content-type': 'application/json', 'a2a-version': '1.0' };
    for (const authorization of [undefined, 'Bearer wrong-token-0123456789abcdef', `Basic ${TOKEN}`]) {
      const response = await rawRequest(`${url}/a2a/jsonrpc`, {
        method: 'POST',
        headers: { ...headers, ...(authorization ? { authorization } : {}) },
        body,
      });
      expect(response.status).toBe(401);
    }
    await expect(
      send(await clientOf(url, 'wrong-token-0123456789abcdef'), userMessage('deploy the api')),
    ).rejects.toThrow();
    expect(await store.list()).toEqual([]);
    expect(llm.requests).toEqual([]);
    // The same request with the token is served: the refusals were the token's.
    const served = await rawRequest(`${url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: { ...headers, authorization: `Bearer ${TOKEN}` },
      body,
    });
    expect(served.status).toBe(200);
  });

  it('refuses a body that is not JSON (415): a page may post text without asking its browser first', async () => {
    const llm = deployScript();
    const { url } = await serve(opsAgent(), { llm });
    const headers = { authorization: `Bearer ${TOKEN}`, 'a2a-version': '1.0' };
    const message = { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'deploy the api' }] };
    const asText = await rawRequest(`${url}/a2a/rest/message:send`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'text/plain' },
      body: JSON.stringify({ message }),
    });
    expect(asText.status).toBe(415);
    expect(llm.requests).toEqual([]);
    // A2A's own media type is JSON too.
    const asA2a = await rawRequest(`${url}/a2a/rest/message:send`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/a2a+json' },
      body: JSON.stringify({ message }),
    });
    expect(asA2a.status).toBe(200);
    expect(JSON.parse(asA2a.body)).toMatchObject({ task: { status: { state: 'TASK_STATE_COMPLETED' } } });
  });

  it('refuses a Host it does not answer for (421) and an Origin of another site (403), the card included', async () => {
    const { url } = await serve(opsAgent(), { llm: deployScript(), allowedOrigins: ['https://app.example'] });
    const port = new URL(url).port;
    const card = `${url}/.well-known/agent-card.json`;
    expect((await rawRequest(card, {})).status).toBe(200);
    expect((await rawRequest(card, { headers: { host: `localhost:${port}` } })).status).toBe(200);
    expect((await rawRequest(card, { headers: { host: `attacker.example:${port}` } })).status).toBe(421);
    const authorized = { authorization: `Bearer ${TOKEN}` };
    expect(
      (await rawRequest(`${url}/a2a/rest/tasks`, { headers: { ...authorized, host: `rebound.example:${port}` } }))
        .status,
    ).toBe(421);
    expect((await rawRequest(card, { headers: { origin: 'https://evil.example' } })).status).toBe(403);
    expect((await rawRequest(card, { headers: { origin: 'https://app.example' } })).status).toBe(200);
    expect((await rawRequest(card, { headers: { origin: url } })).status).toBe(200);
  });

  it('behind a proxy: the card names the given url, and its Host is answered besides the loopback ones', async () => {
    const { url } = await serve(opsAgent(), { llm: deployScript(), url: 'https://agents.example.com/ops/' });
    const port = new URL(url).port;
    const card = await rawRequest(`${url}/.well-known/agent-card.json`, { headers: { host: 'agents.example.com' } });
    expect(card.status).toBe(200);
    expect(JSON.parse(card.body).supportedInterfaces[0].url).toBe('https://agents.example.com/ops/a2a/jsonrpc');
    const other = await rawRequest(`${url}/.well-known/agent-card.json`, {
      headers: { host: `other.example:${port}` },
    });
    expect(other.status).toBe(421);
  });

  it('a task waiting in one server is answered by the next server on the same store', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'openmanus-a2a-'));
    onCleanup(() => rm(dir, { recursive: true, force: true }));
    const first = await serve(opsAgent(), {
      llm: scriptedLlm([{ toolCalls: [{ name: 'ask_human', arguments: { inquire: 'Which service?' } }] }]),
      store: createFileStore(join(dir, 'runs')),
    });
    const asked = await send(await clientOf(first.url), userMessage('deploy something'));
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    await first.server.close();

    const llm = scriptedLlm([(request) => ({ content: `Deploying ${request.messages.at(-1)?.content}.` })]);
    const second = await serve(opsAgent(), { llm, store: createFileStore(join(dir, 'runs')) });
    const client = await clientOf(second.url);
    const kept = await client.getTask({ tenant: '', id: asked.id, historyLength: undefined });
    expect(kept).toMatchObject({ id: asked.id, contextId: asked.contextId });
    expect(kept.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(textIn(kept.status?.message)).toContain('Which service?');

    const done = await send(client, userMessage('the api', { taskId: asked.id, contextId: asked.contextId }));
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textIn(done.status?.message)).toBe('Deploying the api.');
  });

  it('returns the files the run wrote in its workspace as artifacts', async () => {
    const workspace = await mkdtemp(join(tmpdir(), 'openmanus-a2a-ws-'));
    onCleanup(() => rm(workspace, { recursive: true, force: true }));
    await writeFile(join(workspace, 'old.txt'), 'there before');
    const writeReport = defineTool({
      name: 'write_report',
      description: 'Writes the report',
      parameters: z.object({}),
      execute: async (_args, scope) => {
        await writeFile(join(scope.workspace ?? '', 'report.md'), '# Report\n');
        return 'written';
      },
    });
    // A file there before the run (its time set in the past) is not the run's.
    await utimes(join(workspace, 'old.txt'), new Date(0), new Date(0));
    const llm = scriptedLlm([{ toolCalls: [{ name: 'write_report', arguments: {} }] }, { content: 'Done.' }]);
    const { url } = await serve(createAgent({ name: 'writer', tools: [writeReport] }), {
      llm,
      runOptions: { workspace },
    });
    const task = await send(await clientOf(url), userMessage('write the report'));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const file = task.artifacts.find((artifact) => artifact.artifactId === 'file:report.md');
    const part = file?.parts[0];
    expect(part).toMatchObject({ filename: 'report.md', mediaType: 'text/markdown' });
    expect(part?.content?.$case === 'raw' && Buffer.from(part.content.value).toString('utf8')).toBe(
      await readFile(join(workspace, 'report.md'), 'utf8'),
    );
    expect(task.artifacts.map((artifact) => artifact.artifactId)).not.toContain('file:old.txt');
  });
});
