import type { SandboxProvider } from '@openmanus/core';
import { describe, expect, it } from 'vitest';
import { sandboxProviderFor } from '../src/sandboxProvider.js';
import { tempDir } from './helpers.js';

const notFound = async () => {
  throw Object.assign(new Error("Cannot find package '@openmanus/sandbox'"), { code: 'ERR_MODULE_NOT_FOUND' });
};

describe('sandboxProviderFor', () => {
  it('local: the workspace on this host, as the model is told it', async () => {
    const workspace = await tempDir();
    const local = await sandboxProviderFor('local', { workspace, isolation: 'none' });
    if (!local.ok) throw new Error(local.error);
    expect(local.value.workspace).toBe(workspace);
    const sandbox = await local.value.provider.create({ runId: 'r', signal: new AbortController().signal });
    try {
      expect(sandbox.workspace).toBe(workspace);
      expect((await sandbox.exec(['pwd'])).stdout).toBe(`${workspace}\n`);
    } finally {
      await sandbox.close();
    }
  });

  it('docker: a clear error when @openmanus/sandbox is not installed, or does not have the provider', async () => {
    expect(await sandboxProviderFor('docker', { workspace: '/w', load: notFound })).toEqual({
      ok: false,
      error:
        '--sandbox docker needs the @openmanus/sandbox package, which is not installed (pnpm add @openmanus/sandbox)',
    });
    expect(await sandboxProviderFor('docker', { workspace: '/w', load: async () => ({}) })).toEqual({
      ok: false,
      error: '--sandbox docker: @openmanus/sandbox has no createDockerSandboxProvider',
    });
  });

  it('docker: made from [sandbox] with the host workspace; the model is told its work_dir', async () => {
    const given: unknown[] = [];
    const provider = { name: 'docker' } as SandboxProvider;
    const load = async () => ({
      createDockerSandboxProvider: (settings: unknown) => {
        given.push(settings);
        return provider;
      },
    });
    const docker = await sandboxProviderFor('docker', {
      workspace: '/host/ws',
      docker: { image: 'python:3.12-slim', work_dir: '/work' },
      load,
    });
    expect(docker).toEqual({ ok: true, value: { provider, workspace: '/work' } });
    expect(given).toEqual([{ image: 'python:3.12-slim', work_dir: '/work', workspace: '/host/ws' }]);
  });
});
