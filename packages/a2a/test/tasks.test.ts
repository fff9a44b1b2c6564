import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { askHuman, createAgent, createFileStore, createMemoryStore, defineTool, initialStep } from '@openmanus/core';
import { scriptedLlm } from '@openmanus/core/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { clientOf, drain, onCleanup, send, sendRequest, serve, textIn, userMessage } from './helpers.js';

const listAll = {
  tenant: '',
  contextId: '',
  status: TaskState.TASK_STATE_UNSPECIFIED,
  pageToken: '',
  statusTimestampAfter: undefined,
};
const asker = () => createAgent({ name: 'asker', tools: [askHuman] });
const askScript = () => scriptedLlm([{ toolCalls: [{ name: 'ask_human', arguments: { inquire: 'Which one?' } }] }]);

describe('tasks', () => {
  it('a run whose model fails ends its task failed, saying why', async () => {
    const llm = scriptedLlm([{ error: { status: 401, message: 'bad key' } }]);
    const { url } = await serve(createAgent({ name: 'geo' }), { llm });
    const task = await send(await clientOf(url), userMessage('What is the capital of France?'));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(textIn(task.status?.message)).toMatch(/bad key|auth/i);
  });

  it('a message on a task still working is refused, and the task goes on undisturbed for its own client', async () => {
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const hold = defineTool({
      name: 'hold',
      description: 'Holds until released',
      parameters: z.object({}),
      execute: async () => {
        await released;
        return 'released';
      },
    });
    const llm = scriptedLlm([{ toolCalls: [{ name: 'hold', arguments: {} }] }, { content: 'Done.' }]);
    const { url } = await serve(createAgent({ name: 'holder', tools: [hold] }), { llm });
    const client = await clientOf(url);
    let taskId = '';
    let contextId = '';
    const said: string[] = [];
    for await (const event of client.sendMessageStream(sendRequest(userMessage('hold on')))) {
      const payload = event.payload;
      if (payload?.$case === 'task') ({ id: taskId, contextId } = payload.value);
      if (payload?.$case !== 'statusUpdate') continue;
      const text = textIn(payload.value.status?.message);
      said.push(text);
      if (!text.startsWith('Calling hold')) continue;
      // While the tool holds: another message on the task, by blocking send and by stream.
      const busy = userMessage('hurry up', { taskId, contextId });
      await expect(client.sendMessage(sendRequest(busy))).rejects.toThrow(/is working/);
      await expect(drain(client.sendMessageStream(sendRequest(busy)))).rejects.toThrow(/is working/);
      release();
    }
    expect(said.at(-1)).toBe('Done.');
    expect(llm.requests.flatMap((request) => request.messages).some((m) => m.content.includes('hurry up'))).toBe(false);
  });

  it('a waiting task cancelled through the next server on the same store has its run recorded cancelled', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'openmanus-a2a-'));
    onCleanup(() => rm(dir, { recursive: true, force: true }));
    const first = await serve(asker(), { llm: askScript(), store: createFileStore(dir) });
    const asked = await send(await clientOf(first.url), userMessage('ask me'));
    await first.server.close();

    const store = createFileStore(dir);
    const second = await serve(asker(), { llm: scriptedLlm([]), store });
    const cancelled = await (await clientOf(second.url)).cancelTask({ tenant: '', id: asked.id, metadata: undefined });
    expect(cancelled).toMatchObject({ id: asked.id, contextId: asked.contextId });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const saved = await store.load(asked.id);
    expect(saved?.state).toMatchObject({
      status: 'finished',
      finishReason: 'cancelled',
      a2a: { contextId: asked.contextId },
    });
  });

  it('a task whose run stopped midway (its server went down) goes on from its checkpoint at the next message', async () => {
    const agent = createAgent({ name: 'geo' });
    const store = createMemoryStore();
    // What a server that went down mid-run left: the run waiting for its model, the task's context beside it.
    const [midway] = initialStep(agent.config, 'What is the capital of France?');
    await store.save('task-1', { ...midway, runId: 'task-1', a2a: { contextId: 'ctx-1' } } as typeof midway, 0);
    const llm = scriptedLlm([{ content: 'Paris.' }]);
    const { url } = await serve(agent, { llm, store });
    const client = await clientOf(url);
    const kept = await client.getTask({ tenant: '', id: 'task-1', historyLength: undefined });
    expect(kept).toMatchObject({ contextId: 'ctx-1', status: { state: TaskState.TASK_STATE_WORKING } });
    const done = await send(client, userMessage('are you there?', { taskId: 'task-1' }));
    expect(done).toMatchObject({ contextId: 'ctx-1', status: { state: TaskState.TASK_STATE_COMPLETED } });
    expect(textIn(done.status?.message)).toBe('Paris.');
    expect(llm.requests).toHaveLength(1);
  });

  it('lists the tasks, by context and by state, their own and those the store kept from before', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'openmanus-a2a-'));
    onCleanup(() => rm(dir, { recursive: true, force: true }));
    const first = await serve(asker(), { llm: askScript(), store: createFileStore(dir) });
    const before = await send(await clientOf(first.url), userMessage('ask me'));
    await first.server.close();

    const second = await serve(asker(), { llm: scriptedLlm([{ content: 'Hello.' }]), store: createFileStore(dir) });
    const client = await clientOf(second.url);
    const now = await send(client, userMessage('say hello'));
    const all = await client.listTasks(listAll);
    expect(all.tasks.map((task) => task.id).sort()).toEqual([before.id, now.id].sort());
    const waiting = await client.listTasks({ ...listAll, status: TaskState.TASK_STATE_INPUT_REQUIRED });
    expect(waiting.tasks.map((task) => task.id)).toEqual([before.id]);
    const inContext = await client.listTasks({ ...listAll, contextId: now.contextId });
    expect(inContext.tasks.map((task) => task.id)).toEqual([now.id]);
  });
});
