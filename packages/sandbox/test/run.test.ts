// The Docker provider as a run's sandbox (core's RunOptions.sandbox): made on a tool's first call,
// shared by the run's calls, removed when the run ends; two runs at once in two containers.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAgent, defineTool, run, terminate } from '@openmanus/core';
import { scriptedLlm } from '@openmanus/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDockerSandboxProvider } from '../src/dockerProvider.js';
import { docker, dockerReady, SETUP_TIMEOUT, TEST_IMAGE } from './docker.js';

/** A shell tool that runs in the run's sandbox. */
const shell = defineTool({
  name: 'shell',
  description: 'Runs a shell command in the sandbox.',
  parameters: z.object({ command: z.string() }),
  execute: async ({ command }, scope) => {
    if (!scope.sandbox) return 'no sandbox';
    const result = await (await scope.sandbox()).exec(['sh', '-c', command]);
    return result.stdout + result.stderr;
  },
});
const agent = createAgent({ name: 'sandboxed', tools: [shell, terminate] });
const provider = createDockerSandboxProvider({ image: TEST_IMAGE });

/** A scripted model that runs these commands, then terminates. */
const script = (...commands: string[]) =>
  scriptedLlm([
    ...commands.map((command) => ({ toolCalls: [{ name: 'shell', arguments: { command } }] })),
    { toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
  ]);
const observations = (llm: ReturnType<typeof scriptedLlm>) =>
  llm.requests
    .at(-1)
    ?.messages.filter((m) => m.role === 'tool')
    .map((m) => m.content) ?? [];
const containersOf = (runId: string) =>
  docker.listContainers({ all: true, filters: { label: [`openmanus.run-id=${runId}`] } });

let workspaces: string[] = [];
beforeAll(dockerReady, SETUP_TIMEOUT);
afterAll(() => Promise.all(workspaces.map((dir) => rm(dir, { recursive: true, force: true }))));

describe('a run with the docker provider', () => {
  it("runs every call in one container bound to the run's workspace, removed when the run ends", async () => {
    const workspace = await mkdtemp(join(tmpdir(), 'run-sandboxed-'));
    workspaces.push(workspace);
    const llm = script('echo kept > state.txt; hostname', 'cat state.txt; hostname', 'id -u');
    await run(agent, 'Work in the sandbox.', { llm, sandbox: provider, runId: 'one-container', workspace });
    const [first = '', second = '', uid = ''] = observations(llm);
    const host1 = first.trim();
    expect(second.trim().split('\n')).toEqual(['kept', host1]);
    expect(Number(uid)).toBeGreaterThan(0);
    expect(await readFile(join(workspace, 'state.txt'), 'utf8')).toBe('kept\n');
    expect(await containersOf('one-container')).toEqual([]);
  });

  it('gives two runs at once two containers that never see each other', async () => {
    const [a, b] = [await mkdtemp(join(tmpdir(), 'run-a-')), await mkdtemp(join(tmpdir(), 'run-b-'))];
    workspaces = [...workspaces, a, b];
    const llmA = script('echo from-a > mine.txt', 'ls /workspace; hostname');
    const llmB = script('echo from-b > mine.txt', 'ls /workspace; hostname');
    await Promise.all([
      run(agent, 'A', { llm: llmA, sandbox: provider, runId: 'run-a', workspace: a }),
      run(agent, 'B', { llm: llmB, sandbox: provider, runId: 'run-b', workspace: b }),
    ]);
    const [, seenA = ''] = observations(llmA);
    const [, seenB = ''] = observations(llmB);
    const [filesA, hostA] = seenA.trim().split('\n');
    const [filesB, hostB] = seenB.trim().split('\n');
    expect([filesA, filesB]).toEqual(['mine.txt', 'mine.txt']);
    expect(hostA).not.toBe(hostB);
    expect(await readFile(join(a, 'mine.txt'), 'utf8')).toBe('from-a\n');
    expect(await readFile(join(b, 'mine.txt'), 'utf8')).toBe('from-b\n');
    expect([...(await containersOf('run-a')), ...(await containersOf('run-b'))]).toEqual([]);
  });
});
