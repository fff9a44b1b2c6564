import { err, type OpenManusConfig, ok, type SandboxProvider } from '@openmanus/core';
import { describe, expect, it } from 'vitest';
import { providerOf, runSandboxOption } from '../src/options.js';
import { sandboxProviderFor } from '../src/sandboxProvider.js';
import { tempDir } from './helpers.js';

const notFound = async () => {
  throw Object.assign(new Error("Cannot find package '@openmanus/sandbox'"), { code: 'ERR_MODULE_NOT_FOUND' });
};

describe('sandboxProviderFor', () => {
  it('local: the workspace on this host, as the model is told it', async () => {
    const workspace = await tempDir();
    const local = await sandboxProviderFor('local', { workspace, isolation: 'none' });
    if (!local.isOk()) throw new Error(local.error);
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
    expect(await sandboxProviderFor('docker', { workspace: '/w', load: notFound })).toEqual(
      err(
        '--sandbox docker needs the @openmanus/sandbox package, which is not installed (pnpm add @openmanus/sandbox)',
      ),
    );
    expect(await sandboxProviderFor('docker', { workspace: '/w', load: async () => ({}) })).toEqual(
      err('--sandbox docker: @openmanus/sandbox has no createDockerSandboxProvider'),
    );
  });

  it('docker: made from [sandbox] with the host workspace; the model is told its work_dir', async () => {
    const given: unknown[] = [];
    const provider = { name: 'docker' } as SandboxProvider;
    const load = async () => ({
      createDockerSandboxProvider: (options: unknown) => {
        given.push(options);
        return provider;
      },
      sandboxSettingsFrom: (config: OpenManusConfig) =>
        ok({
          image: String(config.sections.sandbox && (config.sections.sandbox as { image: string }).image),
          workDir: '/work',
        }),
    });
    const config = { sections: { sandbox: { image: 'python:3.12-slim' } } } as unknown as OpenManusConfig;
    const docker = await sandboxProviderFor('docker', { workspace: '/host/ws', config, load });
    expect(docker).toEqual(ok({ provider, workspace: '/work' }));
    expect(given).toEqual([{ image: 'python:3.12-slim', workDir: '/work', workspace: '/host/ws' }]);
  });

  it('docker: a bad [sandbox] key is a clear error naming it, from the real package', async () => {
    const config = { file: 'config.toml', sections: { sandbox: { memory_limit: 12 } } } as unknown as OpenManusConfig;
    const docker = await sandboxProviderFor('docker', { workspace: '/w', config });
    expect(docker.isOk()).toBe(false);
    expect(docker.isOk() ? '' : docker.error).toMatch(/^--sandbox docker: config\.toml: \[sandbox\]\.memory_limit/);
  });
});

describe('--sandbox and [sandbox] use_sandbox', () => {
  const option = (value?: string) => {
    const parsed = runSandboxOption(value);
    if (!parsed.isOk()) throw new Error(parsed.error);
    return parsed.value;
  };

  it('--sandbox names an isolation of the tools, or a provider', () => {
    expect(option('bwrap')).toEqual({ isolation: 'bwrap' });
    expect(option('local')).toEqual({ provider: 'local' });
    expect(option(undefined)).toBeUndefined();
    expect(runSandboxOption('podman')).toEqual(
      err('--sandbox must be "auto", "bwrap", "none", "local", "docker" or "daytona", got "podman"'),
    );
  });

  it('use_sandbox = true puts Manus, Python and bash included, in Docker unless --sandbox says otherwise', () => {
    expect(providerOf(undefined, { use_sandbox: true, image: 'python:3.12-slim' })).toBe('docker');
    expect(providerOf(undefined, { use_sandbox: false })).toBeUndefined();
    expect(providerOf(undefined, undefined)).toBeUndefined();
    expect(providerOf(option('local'), { use_sandbox: true })).toBe('local');
    expect(providerOf(option('none'), { use_sandbox: true })).toBeUndefined();
  });
});
