// `[sandbox]` of config.toml: OpenManus's keys and defaults, and a clear error per bad key.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, ok } from '@openmanus/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDockerSandboxProvider } from '../src/dockerProvider.js';
import { DEFAULT_SANDBOX_SETTINGS, memoryBytes, sandboxSettingsFrom } from '../src/settings.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sandbox-config-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** `[sandbox]` read from a config.toml with these lines. */
async function settingsOf(lines: string) {
  const file = join(dir, `${Math.random()}.toml`);
  await writeFile(file, `[llm]\nmodel = "m"\napi_key = "k"\n\n[sandbox]\n${lines}\n`);
  const config = loadConfig({ path: file, env: {} });
  if (!config.isOk()) throw new Error(config.error.message);
  return sandboxSettingsFrom(config.value);
}

describe('[sandbox] settings', () => {
  it("has OpenManus's defaults", async () => {
    expect(await settingsOf('')).toEqual(ok(DEFAULT_SANDBOX_SETTINGS));
    expect(DEFAULT_SANDBOX_SETTINGS).toEqual({
      useSandbox: false,
      image: 'python:3.12-slim',
      workDir: '/workspace',
      memoryLimit: '512m',
      cpuLimit: 1.0,
      timeout: 300,
      networkEnabled: false,
    });
  });

  it("reads OpenManus's keys", async () => {
    const settings = await settingsOf(
      'use_sandbox = true\nimage = "openmanus-sandbox:bookworm"\nwork_dir = "/work"\nmemory_limit = "1g"\ncpu_limit = 0.5\ntimeout = 60\nnetwork_enabled = true',
    );
    expect(settings).toEqual(
      ok({
        useSandbox: true,
        image: 'openmanus-sandbox:bookworm',
        workDir: '/work',
        memoryLimit: '1g',
        cpuLimit: 0.5,
        timeout: 60,
        networkEnabled: true,
      }),
    );
  });

  it.each([
    ['memory_limit = "lots"', '[sandbox].memory_limit', /"512m"/],
    ['memory_limit = "1k"', '[sandbox].memory_limit', /at least 6m/],
    ['cpu_limit = 0', '[sandbox].cpu_limit', /0/],
    ['cpu_limit = "1"', '[sandbox].cpu_limit', /number/],
    ['timeout = -1', '[sandbox].timeout', /0/],
    ['work_dir = "relative"', '[sandbox].work_dir', /absolute/],
    ['work_dir = "/a/../etc"', '[sandbox].work_dir', /absolute/],
    ['use_sandbox = "yes"', '[sandbox].use_sandbox', /boolean/],
    ['network_enabled = 1', '[sandbox].network_enabled', /boolean/],
    ['image = ""', '[sandbox].image', /1/],
    ['memory = "1g"', '[sandbox]', /unknown key memory/],
  ])('names the bad key: %s', async (line, key, message) => {
    const settings = await settingsOf(line);
    expect(settings.isOk()).toBe(false);
    if (!settings.isOk()) {
      expect(settings.error.key).toBe(key);
      expect(settings.error.message).toMatch(message);
      expect(settings.error.file).toMatch(/\.toml$/);
    }
  });

  it('is empty-safe: a config without [sandbox] gets the defaults', () => {
    const config = loadConfig({ env: { OPENAI_API_KEY: 'sk' }, cwd: dir });
    if (!config.isOk()) throw new Error(config.error.message);
    expect(sandboxSettingsFrom(config.value)).toEqual(ok(DEFAULT_SANDBOX_SETTINGS));
  });
});

describe('memory sizes', () => {
  it("reads Docker's notation", () => {
    expect(memoryBytes('512m')).toBe(512 * 1024 ** 2);
    expect(memoryBytes('1g')).toBe(1024 ** 3);
    expect(memoryBytes('1.5G')).toBe(1.5 * 1024 ** 3);
    expect(memoryBytes('65536k')).toBe(64 * 1024 ** 2);
    expect(memoryBytes(String(10 * 1024 ** 2))).toBe(10 * 1024 ** 2);
    for (const bad of ['', 'm', '-1m', '1t', '5m', '1e9']) expect(memoryBytes(bad), bad).toBeUndefined();
  });

  it('are checked when a provider is made in code', () => {
    expect(() => createDockerSandboxProvider({ memoryLimit: 'big' })).toThrow('memory_limit "big"');
    expect(() => createDockerSandboxProvider({ cpuLimit: 0 })).toThrow('cpu_limit must be positive');
  });
});
