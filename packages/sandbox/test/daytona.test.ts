// The Daytona provider against a local stand-in of the API (Daytona's cloud cannot be reached
// from here): a sandbox per run made through the official SDK, commands, files, the preview
// link, deletion on close, and clear errors when `[daytona]` or the service is wrong.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadConfig, ok } from '@openmanus/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDaytonaSandboxProvider } from '../src/daytonaProvider.js';
import { type DaytonaSettings, DEFAULT_DAYTONA_SETTINGS, daytonaSettingsFrom } from '../src/daytonaSettings.js';
import { sandboxSettingsFrom } from '../src/settings.js';
import { type DaytonaStandIn, startDaytonaStandIn } from './daytonaStandIn.js';

let dir: string;
let standIn: DaytonaStandIn;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'daytona-test-'));
  standIn = await startDaytonaStandIn();
});
afterAll(async () => {
  await standIn.close();
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => standIn.failOn(undefined));

/** A loaded config.toml with these extra lines. */
async function configOf(lines: string) {
  const file = join(dir, `${Math.random()}.toml`);
  await writeFile(file, `[llm]\nmodel = "m"\napi_key = "k"\n${lines}\n`);
  const config = loadConfig({ path: file, env: {} });
  if (!config.isOk()) throw new Error(config.error.message);
  return config.value;
}

const settings = (): DaytonaSettings => ({ ...DEFAULT_DAYTONA_SETTINGS, apiKey: 'key-1', serverUrl: standIn.url });
const request = (runId: string) => ({ runId, signal: new AbortController().signal });

describe('[daytona] settings', () => {
  it("has OpenManus's keys and defaults", async () => {
    const config = await configOf('[daytona]\ndaytona_api_key = "abc"');
    expect(daytonaSettingsFrom(config)).toEqual(
      ok({
        apiKey: 'abc',
        serverUrl: 'https://app.daytona.io/api',
        target: 'us',
        imageName: 'whitezxj/sandbox:0.1.0',
        entrypoint: '/usr/bin/supervisord -n -c /etc/supervisor/conf.d/supervisord.conf',
        vncPassword: '123456',
      }),
    );
    const given = await configOf(
      '[daytona]\ndaytona_api_key = "abc"\ndaytona_server_url = "http://127.0.0.1:9/api"\ndaytona_target = "eu"\nsandbox_image_name = "img:1"\nsandbox_entrypoint = "run"\nVNC_password = "pw"',
    );
    expect(daytonaSettingsFrom(given)).toMatchObject(
      ok({
        serverUrl: 'http://127.0.0.1:9/api',
        target: 'eu',
        imageName: 'img:1',
        entrypoint: 'run',
        vncPassword: 'pw',
      }),
    );
  });

  it('without [daytona] says Daytona is not configured, and everything else still loads', async () => {
    const config = await configOf('[sandbox]\nimage = "python:3.12-slim"');
    const result = daytonaSettingsFrom(config);
    expect(result.isOk()).toBe(false);
    if (!result.isOk()) {
      expect(result.error.key).toBe('[daytona]');
      expect(result.error.message).toMatch(/not configured.*daytona_api_key/);
    }
    expect(sandboxSettingsFrom(config).isOk()).toBe(true);
  });

  it.each([
    ['daytona_target = "us"', '[daytona].daytona_api_key', /required/],
    ['daytona_api_key = "  "', '[daytona].daytona_api_key', /required/],
    ['daytona_api_key = "k"\ndaytona_server_url = "file:///etc"', '[daytona].daytona_server_url', /http\(s\) URL/],
    ['daytona_api_key = "k"\nVNC_password = 123', '[daytona].VNC_password', /string/],
    ['daytona_api_key = "k"\nvnc_pasword = "x"', '[daytona]', /unknown key vnc_pasword/],
  ])('names the bad key: %s', async (lines, key, message) => {
    const result = daytonaSettingsFrom(await configOf(`[daytona]\n${lines}`));
    expect(result.isOk()).toBe(false);
    if (!result.isOk()) {
      expect(result.error.key).toBe(key);
      expect(result.error.message).toMatch(message);
    }
  });
});

describe('a Daytona sandbox (against the stand-in)', () => {
  it('is made per run, runs commands, reads and writes files, links a preview, and is deleted on close', async () => {
    const workspace = await mkdtemp(join(dir, 'ws-'));
    const provider = createDaytonaSandboxProvider(settings(), { workspace });
    const sandbox = await provider.create(request('run-1'));
    expect(sandbox.provider).toBe('daytona');
    expect(standIn.live.has(sandbox.id)).toBe(true);
    expect(standIn.created.at(-1)).toMatchObject({
      target: 'us',
      public: true,
      env: { VNC_PASSWORD: '123456' },
      labels: { 'openmanus.run-id': 'run-1' },
    });
    expect(
      standIn.calls.filter((call) => call.path === '/sandbox').every((call) => call.authorization === 'Bearer key-1'),
    ).toBe(true);
    // The image's entrypoint was started in a session of its own.
    expect(standIn.calls.some((call) => /\/toolbox\/.+\/process\/session\/.+\/exec$/.test(call.path))).toBe(true);

    expect(await sandbox.exec(['echo', 'hello daytona'])).toMatchObject({
      exitCode: 0,
      stdout: 'hello daytona\n',
      timedOut: false,
    });
    expect(await sandbox.exec(['sh', '-c', 'exit 3'])).toMatchObject({ exitCode: 3, timedOut: false });
    expect(await sandbox.exec(['sh', '-c', 'echo "$1"', 'sh', "it's a $HOME; `x`"])).toMatchObject({
      stdout: "it's a $HOME; `x`\n",
    });
    expect(
      await sandbox.exec(['python3', '-c', 'import sys; print(sys.stdin.read().upper())'], { stdin: 'from stdin' }),
    ).toMatchObject({
      exitCode: 0,
      stdout: 'FROM STDIN\n',
    });
    const started = Date.now();
    const slow = await sandbox.exec(['sleep', '30'], { timeoutMs: 1000 });
    expect(slow).toMatchObject({ exitCode: null, timedOut: true });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await sandbox.exec(['head', '-c', '5000', '/dev/zero'], { maxOutputBytes: 1000 })).toMatchObject({
      droppedBytes: 4000,
    });

    await sandbox.writeFile('notes/a.txt', 'written through the file API');
    expect(await readFile(join(workspace, 'notes', 'a.txt'), 'utf8')).toBe('written through the file API');
    expect(Buffer.from(await sandbox.readFile('notes/a.txt')).toString()).toBe('written through the file API');
    expect((await sandbox.exec(['cat', 'a.txt'], { cwd: 'notes' })).stdout).toBe('written through the file API');
    expect(await sandbox.list('.')).toEqual([{ name: 'notes', type: 'directory', size: 4096 }]);
    expect(await sandbox.list('notes')).toEqual([{ name: 'a.txt', type: 'file', size: 28 }]);

    const out = join(dir, 'copied-out');
    await sandbox.copyOut('notes', out);
    expect(await readFile(join(out, 'a.txt'), 'utf8')).toBe('written through the file API');
    await sandbox.copyIn(out, 'back');
    expect(Buffer.from(await sandbox.readFile('back/a.txt')).toString()).toBe('written through the file API');
    await sandbox.remove('back');
    expect((await sandbox.list('.')).map((entry) => entry.name)).toEqual(['notes']);
    // A missing path is ENOENT, as on a file system (the editor creates a file in a new directory on it).
    await expect(sandbox.readFile('missing.txt')).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(sandbox.list('nowhere')).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(sandbox.remove('nowhere')).rejects.toMatchObject({ code: 'ENOENT' });

    expect(await sandbox.previewUrl(8080)).toEqual({ url: `https://8080-${sandbox.id}.proxy.stand-in`, token: 'tok' });

    await sandbox.close();
    expect(standIn.live.has(sandbox.id)).toBe(false);
    expect(
      standIn.calls.filter((call) => call.method === 'DELETE' && call.path === `/sandbox/${sandbox.id}`),
    ).toHaveLength(1);
    await expect(sandbox.exec(['echo'])).rejects.toThrow(/closed/);
    await sandbox.close();
  });

  it('a failing service gives a clear error and leaves no sandbox behind', async () => {
    const before = standIn.live.size;
    standIn.failOn(/^\/sandbox$/);
    await expect(createDaytonaSandboxProvider(settings()).create(request('run-2'))).rejects.toThrow(
      /daytona sandbox: could not make a sandbox at http:\/\/127\.0\.0\.1:\d+/,
    );
    // Made, but the toolbox fails while it is prepared: the sandbox is deleted again.
    standIn.failOn(/\/files\/folder$/);
    await expect(createDaytonaSandboxProvider(settings()).create(request('run-3'))).rejects.toThrow(
      /could not make a sandbox/,
    );
    expect(standIn.live.size).toBe(before);
  });

  it('an unreachable service gives a clear error', async () => {
    const closed = await startDaytonaStandIn();
    await closed.close();
    const provider = createDaytonaSandboxProvider({ ...settings(), serverUrl: closed.url }, { requestTimeoutMs: 2000 });
    await expect(provider.create(request('run-4'))).rejects.toThrow(
      /could not make a sandbox at .*(ECONNREFUSED|connect)/,
    );
  });

  it('importing the package does not load the SDK: the first sandbox does', async () => {
    // A child node whose resolver refuses the SDK, importing the built package (build it first).
    const refuseSdk = `export async function resolve(specifier, context, next) {
      if (specifier === '@daytonaio/sdk') throw new Error('the SDK was loaded');
      return next(specifier, context);
    }`;
    const script = `
      import { register } from 'node:module';
      register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(refuseSdk)}));
      const { createDaytonaSandboxProvider } = await import('./dist/index.js');
      console.log('imported');
      const provider = createDaytonaSandboxProvider({ apiKey: 'k', serverUrl: 'http://127.0.0.1:9', target: 'us', imageName: 'i', entrypoint: 'e', vncPassword: 'p' });
      await provider.create({ runId: 'r', signal: new AbortController().signal }).catch((error) => console.log(error.message));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
      cwd: join(import.meta.dirname, '..'),
    });
    expect(stdout).toBe('imported\nthe SDK was loaded\n');
  });
});
