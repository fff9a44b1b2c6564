// The code of the A2A guide (docs/src/content/docs/guides/a2a.md shows its regions), run: Manus
// served over A2A, a task that writes a file, the file returned as an artifact.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { createFileStore, createManus } from '@openmanus/core';
import { scriptedLlm } from '@openmanus/core/testing';
import { expect, it } from 'vitest';
import { serveA2a } from '../src/index.js';
import { clientOf, onCleanup, send, textIn, userMessage } from './helpers.js';

it('serves Manus over A2A: the card names its tools, a task returns its answer and the file it wrote', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'openmanus-a2a-guide-'));
  onCleanup(() => rm(dir, { recursive: true, force: true }));
  const workspace = join(dir, 'workspace');
  const llm = scriptedLlm([
    {
      toolCalls: [
        {
          name: 'str_replace_editor',
          arguments: { command: 'create', path: join(workspace, 'notes.md'), file_text: '# Kyoto\n' },
        },
      ],
    },
    { content: 'Wrote notes.md.' },
  ]);
  const storeDir = join(dir, 'tasks');

  // #region serve
  const server = serveA2a(createManus({ workspace }), {
    llm,
    // Tasks outlive the server: one started later on this store answers those left waiting.
    store: createFileStore(storeDir),
    // Python calls wait for the client's approval (the task is input-required until it answers).
    approvals: ['python_execute'],
    runOptions: { workspace },
  });
  const url = await server.listen(0, '127.0.0.1');
  console.log(`A2A agent at ${url}; clients send Authorization: Bearer ${server.token}`);
  // #endregion serve
  onCleanup(async () => {
    await server.idle();
    await server.close();
  });

  const client = await clientOf(url, server.token);
  const card = await client.getAgentCard();
  expect(card.name).toBe('Manus');
  expect(card.skills.map((skill) => skill.id)).toEqual(['python_execute', 'str_replace_editor', 'ask_human']);
  const task = await send(client, userMessage('Write notes on Kyoto to notes.md'));
  expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  expect(textIn(task.status?.message)).toBe('Wrote notes.md.');
  expect(task.artifacts.map((artifact) => artifact.artifactId)).toEqual(['answer', 'file:notes.md']);
});
