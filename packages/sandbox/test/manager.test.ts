// OpenManus's tests/sandbox/test_sandbox_manager.py against a real daemon: create, the limit with
// its exact error, an unknown id, delete, idle cleanup, and closing the manager.
import type { SandboxProvider } from '@openmanus/core';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDockerSandboxProvider } from '../src/dockerProvider.js';
import { createSandboxManager, type SandboxManager } from '../src/manager.js';
import { docker, dockerReady, SETUP_TIMEOUT, TEST_IMAGE } from './docker.js';

const provider = createDockerSandboxProvider({ image: TEST_IMAGE });
const request = (runId = 'managed') => ({ runId, signal: new AbortController().signal });
const containerGone = async (id: string) => !(await docker.listContainers({ all: true })).some((c) => c.Id === id);

let manager: SandboxManager;
beforeAll(dockerReady, SETUP_TIMEOUT);
afterEach(() => manager.close());

describe('the sandbox manager (OpenManus test_sandbox_manager.py)', () => {
  it('creates a working sandbox it tracks by id', async () => {
    manager = createSandboxManager(provider, { maxSandboxes: 2, idleTimeoutMs: 60_000, cleanupIntervalMs: 30_000 });
    const sandbox = await manager.create(request());
    expect(manager.ids()).toEqual([sandbox.id]);
    expect((await manager.get(sandbox.id).exec(['sh', '-c', "echo 'test'"])).stdout.trim()).toBe('test');
  });

  it("refuses more than maxSandboxes with OpenManus's error, counting sandboxes still starting", async () => {
    manager = createSandboxManager(provider, { maxSandboxes: 2 });
    const [first, second, third] = await Promise.allSettled([
      manager.create(request()),
      manager.create(request()),
      manager.create(request()),
    ]);
    expect(first.status).toBe('fulfilled');
    expect(second.status).toBe('fulfilled');
    expect(third).toMatchObject({ status: 'rejected', reason: new Error('Maximum number of sandboxes (2) reached') });
    expect(manager.ids()).toHaveLength(2);
    // A closed sandbox frees its place.
    if (first.status === 'fulfilled') await first.value.close();
    await expect(manager.create(request())).resolves.toBeDefined();
  });

  it('says an unknown id is not found', () => {
    manager = createSandboxManager(provider);
    expect(() => manager.get('nonexistent-id')).toThrow('Sandbox nonexistent-id not found');
  });

  it('deletes a sandbox and its container', async () => {
    manager = createSandboxManager(provider);
    const sandbox = await manager.create(request('delete-me'));
    const [container] = await docker.listContainers({ filters: { label: ['openmanus.run-id=delete-me'] } });
    expect(container).toBeDefined();
    await manager.delete(sandbox.id);
    expect(manager.ids()).toEqual([]);
    expect(await containerGone(container?.Id ?? '')).toBe(true);
  });

  it('closes sandboxes idle past the idle timeout, never one in the middle of a call', async () => {
    manager = createSandboxManager(provider, { idleTimeoutMs: 100 });
    const idle = await manager.create(request());
    const busy = await manager.create(request());
    const call = busy.exec(['sleep', '0.6']);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await manager.cleanupIdle();
    expect(manager.ids()).toEqual([busy.id]);
    await expect(idle.exec(['true'])).rejects.toThrow('the sandbox is closed');
    expect((await call).exitCode).toBe(0);
  });

  it('runs the idle cleanup on its own, every cleanupIntervalMs', async () => {
    // The real provider, with a way to await the close of the sandbox it made.
    let closedByManager: () => void = () => {};
    const closed = new Promise<void>((resolve) => (closedByManager = resolve));
    const watched: SandboxProvider = {
      name: 'docker',
      create: async (r) => {
        const sandbox = await provider.create(r);
        return { ...sandbox, close: () => sandbox.close().then(closedByManager) };
      },
    };
    manager = createSandboxManager(watched, { idleTimeoutMs: 50, cleanupIntervalMs: 100 });
    const sandbox = await manager.create(request());
    await closed;
    expect(manager.ids()).toEqual([]);
    await expect(sandbox.exec(['true'])).rejects.toThrow('the sandbox is closed');
  });

  it('closes every sandbox when it is closed', async () => {
    manager = createSandboxManager(provider, { maxSandboxes: 2 });
    await Promise.all([manager.create(request()), manager.create(request())]);
    await manager.close();
    expect(manager.ids()).toEqual([]);
    expect(await docker.listContainers({ all: true, filters: { label: ['openmanus.run-id=managed'] } })).toEqual([]);
  });
});
