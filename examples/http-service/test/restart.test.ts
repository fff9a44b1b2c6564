import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startOpenAiServer } from '@openmanus/core/testing';
import { describe, expect, it } from 'vitest';
import { buildChild, startChild } from './child.js';
import { finish, onCleanup, TOKEN, tempDir, until } from './helpers.js';

/** A child service on its own data dir, with the log of what its tools did. */
async function childSetup(script: Parameters<typeof startOpenAiServer>[0]['script']) {
  const program = await buildChild();
  const model = await startOpenAiServer({ script });
  onCleanup(() => model.close());
  const dir = await tempDir();
  const log = join(dir, 'tools.log');
  const args = [join(dir, 'service'), model.baseURL, log, TOKEN];
  const lines = async () => (existsSync(log) ? (await readFile(log, 'utf8')).split('\n').filter(Boolean) : []);
  return { model, lines, start: (env: Record<string, string> = {}) => startChild(program, args, env) };
}

describe('a killed server, restarted, resumes its runs from SQLite', () => {
  it('a run killed while the model thinks goes on from its last transition: no tool call is repeated', async () => {
    const { model, lines, start } = await childSetup([
      { content: 'First a note.', toolCalls: [{ id: 'n1', name: 'note', arguments: { text: 'one' } }] },
      // The first process dies while waiting for this reply.
      { content: 'never delivered', delayMs: 30_000 },
      finish('Resumed and done.'),
    ]);
    const first = await start();
    const id = String((await first.call('POST', '/runs', { task: 'take a note' })).json.id);
    await until(() => model.hits === 2);
    first.process.kill('SIGKILL');
    await first.exited;

    const second = await start();
    await until(async () => (await second.call('GET', `/runs/${id}`)).json.status === 'finished');
    expect((await second.call('GET', `/runs/${id}`)).json).toMatchObject({ answer: 'Resumed and done.' });
    expect(await lines()).toEqual(['note one']);
    expect(model.hits).toBe(3);
    const resent = model.requests[2]?.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(resent).toEqual(['noted: one']);
  });

  it('a call that must not be re-run blindly is not run again after a SIGKILL: the model is told instead', async () => {
    const { model, lines, start } = await childSetup([
      { toolCalls: [{ id: 'd1', name: 'deploy', arguments: { target: 'production' } }] },
      finish('I will check production before deploying again.'),
    ]);
    const first = await start({ DEPLOY_HANGS: '1' });
    const id = String((await first.call('POST', '/runs', { task: 'deploy the site' })).json.id);
    await until(async () => (await first.call('GET', `/runs/${id}`)).json.status === 'awaiting_approval');
    const pending = (await first.call('GET', `/runs/${id}`)).json.pending as { effectId: string }[];
    expect((await first.call('POST', `/runs/${id}/approve`, { effectId: pending[0]?.effectId })).status).toBe(202);
    await until(async () => (await lines()).length > 0);
    first.process.kill('SIGKILL');
    await first.exited;

    // The same service on the same data dir: it resumes the run, and the deploy is not done twice.
    const second = await start();
    await until(async () => (await second.call('GET', `/runs/${id}`)).json.status === 'finished');
    expect(await lines()).toEqual([expect.stringMatching(new RegExp(`^${id}/\\S+ production$`))]);
    const told = model.requests[1]?.messages.find((m) => m.role === 'tool')?.content;
    expect(told).toMatch(/^Error: deploy was interrupted while it ran .* may or may not have taken effect/);
    expect((await second.call('GET', `/runs/${id}`)).json).toMatchObject({
      finishReason: 'terminated',
      answer: 'I will check production before deploying again.',
    });
  });
});
