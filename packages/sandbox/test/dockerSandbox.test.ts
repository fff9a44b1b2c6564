// OpenManus's tests/sandbox/test_sandbox.py and test_client.py, against a real daemon: the
// working directory, files, Python, persistence, the image's Python, cleanup, a bad image,
// missing files, copies in and out, and the bound workspace; plus the port's exec contract.
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDockerSandboxProvider } from '../src/dockerProvider.js';
import type { DockerSandbox } from '../src/dockerSandbox.js';
import { docker, dockerReady, SETUP_TIMEOUT, TEST_IMAGE } from './docker.js';

const provider = createDockerSandboxProvider({ image: TEST_IMAGE, memoryLimit: '256m', cpuLimit: 0.5 });
const request = (runId: string, workspace?: string) => ({
  runId,
  signal: new AbortController().signal,
  ...(workspace ? { workspace } : {}),
});
const text = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');

let sandbox: DockerSandbox;
let host: string;
let hostWorkspace: string;

beforeAll(async () => {
  await dockerReady();
  host = await mkdtemp(join(tmpdir(), 'sandbox-test-'));
  hostWorkspace = join(host, 'workspace');
  await mkdir(hostWorkspace);
  await writeFile(join(hostWorkspace, 'from-host.txt'), 'Volume test');
  sandbox = await provider.create(request('sandbox-test', hostWorkspace));
}, SETUP_TIMEOUT);

afterAll(async () => {
  await sandbox?.close();
  await rm(host, { recursive: true, force: true });
});

describe('a docker sandbox (OpenManus test_sandbox.py)', () => {
  it('works in /workspace', async () => {
    const result = await sandbox.exec(['pwd']);
    expect(result).toMatchObject({ exitCode: 0, stdout: '/workspace\n', timedOut: false });
    expect(sandbox.workspace).toBe('/workspace');
  });

  it('writes and reads files', async () => {
    await sandbox.writeFile('/workspace/test.txt', 'Hello from sandbox!');
    expect(text(await sandbox.readFile('/workspace/test.txt'))).toBe('Hello from sandbox!');
  });

  it('runs Python that reads a file written through the API', async () => {
    await sandbox.writeFile('/workspace/py-input.txt', 'Hello from file!');
    await sandbox.writeFile(
      '/workspace/test.py',
      "print('Hello from Python!')\nprint(open('/workspace/py-input.txt').read())\n",
    );
    const result = await sandbox.exec(['python3', '/workspace/test.py']);
    expect(result.stdout).toBe('Hello from Python!\nHello from file!\n');
  });

  it('keeps files, nested directories made as needed', async () => {
    const files = { 'file1.txt': 'Content 1', 'file2.txt': 'Content 2', 'nested/deeper/file3.txt': 'Content 3' };
    for (const [path, content] of Object.entries(files)) await sandbox.writeFile(`/workspace/${path}`, content);
    for (const [path, content] of Object.entries(files)) expect(text(await sandbox.readFile(path))).toBe(content);
    // The directories belong to the sandbox's user: code inside can write there too.
    expect(
      (await sandbox.exec(['sh', '-c', 'echo more > nested/deeper/by-code.txt && cat nested/deeper/by-code.txt']))
        .stdout,
    ).toBe('more\n');
  });

  it("runs the image's Python (OpenManus expected 3.10 from a 3.12 image; the image here is Debian bookworm's 3.11)", async () => {
    const version = await sandbox.exec(['python3', '--version']);
    expect(version.stdout).toMatch(/^Python 3\.11\.\d+\n$/);
    await sandbox.writeFile('env_test.py', 'import sys, os, json\nprint("Python is working!")\n');
    expect((await sandbox.exec(['python3', 'env_test.py'])).stdout).toBe('Python is working!\n');
  });

  it('is removed with its container on close', async () => {
    const other = await provider.create(request('cleanup-test'));
    await other.writeFile('test.txt', 'test');
    const id = other.containerId;
    await other.close();
    const all = await docker.listContainers({ all: true });
    expect(all.map((c) => c.Id)).not.toContain(id);
    await expect(other.exec(['true'])).rejects.toThrow('the sandbox is closed');
  });

  it('fails to start with an image that does not exist, saying how to get one', async () => {
    const bad = createDockerSandboxProvider({ image: 'nonexistent:latest', workDir: '/invalid' });
    await expect(bad.create(request('bad-image'))).rejects.toThrow(
      /image "nonexistent:latest" is not available.*scripts\/docker\.sh image/,
    );
  });
});

describe('files in and out (OpenManus test_client.py)', () => {
  it('runs a command, and stops one that outlives its time limit', async () => {
    expect((await sandbox.exec(['sh', '-c', "echo 'test'"])).stdout.trim()).toBe('test');
    const started = Date.now();
    const slow = await sandbox.exec(['sleep', '10'], { timeoutMs: 1000 });
    expect(slow).toMatchObject({ exitCode: null, timedOut: true });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('copies a host file in and a sandbox file out', async () => {
    await writeFile(join(host, 'src.txt'), 'Copy to container');
    await sandbox.copyIn(join(host, 'src.txt'), '/workspace/copied.txt');
    expect(text(await sandbox.readFile('/workspace/copied.txt'))).toBe('Copy to container');
    await sandbox.writeFile('/workspace/out.txt', 'Hello, World!');
    await sandbox.copyOut('/workspace/out.txt', join(host, 'dst.txt'));
    expect(await readFile(join(host, 'dst.txt'), 'utf8')).toBe('Hello, World!');
  });

  it('copies directories both ways, owned by the host process when they come out', async () => {
    await mkdir(join(host, 'tree', 'sub'), { recursive: true });
    await writeFile(join(host, 'tree', 'sub', 'a.txt'), 'A');
    await sandbox.copyIn(join(host, 'tree'), '/tmp/copied-tree');
    expect(text(await sandbox.readFile('/tmp/copied-tree/sub/a.txt'))).toBe('A');
    await sandbox.exec([
      'sh',
      '-c',
      'mkdir -p /tmp/made/x && echo B > /tmp/made/x/b.txt && chmod 4755 /tmp/made/x/b.txt',
    ]);
    await sandbox.copyOut('/tmp/made', join(host, 'made-out'));
    const copied = await stat(join(host, 'made-out', 'x', 'b.txt'));
    expect(await readFile(join(host, 'made-out', 'x', 'b.txt'), 'utf8')).toBe('B\n');
    expect(copied.uid).toBe(process.getuid?.());
    expect(copied.mode & 0o4000).toBe(0);
  });

  it("makes files and copies owned by the sandbox's user, who can append to them", async () => {
    await sandbox.writeFile('owned/by-api.txt', 'first\n');
    await writeFile(join(host, 'to-copy.txt'), 'copied\n');
    await sandbox.copyIn(join(host, 'to-copy.txt'), '/workspace/owned/copied.txt');
    const result = await sandbox.exec([
      'sh',
      '-c',
      'id -u; stat -c %u owned owned/by-api.txt owned/copied.txt; echo more >> owned/by-api.txt && echo more >> owned/copied.txt && cat owned/by-api.txt owned/copied.txt',
    ]);
    const [uid, ...rest] = result.stdout.split('\n');
    expect(rest).toEqual([uid, uid, uid, 'first', 'more', 'copied', 'more', '']);
  });

  it('reads at most maxBytes of a file', async () => {
    await sandbox.writeFile('long.txt', 'x'.repeat(100_000));
    expect(text(await sandbox.readFile('long.txt', { maxBytes: 10 }))).toBe('x'.repeat(10));
    expect((await sandbox.readFile('long.txt')).length).toBe(100_000);
  });

  it('sees the bound workspace: host files inside, sandbox files on the host', async () => {
    expect(text(await sandbox.readFile('/workspace/from-host.txt'))).toBe('Volume test');
    await sandbox.exec(['sh', '-c', 'echo written inside > /workspace/from-sandbox.txt']);
    expect(await readFile(join(hostWorkspace, 'from-sandbox.txt'), 'utf8')).toBe('written inside\n');
  });

  it('says "not found" for a missing file, read or copied out', async () => {
    await expect(sandbox.readFile('/nonexistent.txt')).rejects.toThrow(/not found/);
    await expect(sandbox.copyOut('/nonexistent.txt', join(host, 'local.txt'))).rejects.toThrow(/not found/);
    await expect(sandbox.list('/nonexistent')).rejects.toThrow('/nonexistent: not found');
    await expect(sandbox.remove('/workspace/nonexistent')).rejects.toThrow('/workspace/nonexistent: not found');
  });

  it('lists a directory and removes entries', async () => {
    await sandbox.writeFile('listing/a.txt', 'abc');
    await sandbox.exec(['sh', '-c', 'mkdir listing/dir && ln -s a.txt listing/link']);
    expect(await sandbox.list('listing')).toEqual([
      { name: 'a.txt', type: 'file', size: 3 },
      { name: 'dir', type: 'directory', size: expect.any(Number) },
      { name: 'link', type: 'symlink', size: 5 },
    ]);
    // As on the host: a file's own name is never followed when it is a link.
    await expect(sandbox.readFile('listing/link')).rejects.toMatchObject({ code: 'ELOOP' });
    await sandbox.remove('listing/dir');
    await sandbox.remove('listing/a.txt');
    expect((await sandbox.list('listing')).map((e) => e.name)).toEqual(['link']);
    await expect(sandbox.readFile('listing')).rejects.toThrow('is a directory');
  });
});

describe('exec', () => {
  it('gives stdin, extra variables, a working directory, and separate stdout and stderr', async () => {
    const result = await sandbox.exec(['sh', '-c', 'cat; echo "$GREETING from $(pwd)"; echo oops >&2; exit 3'], {
      stdin: 'piped\n',
      env: { GREETING: 'hello' },
      cwd: 'nested',
    });
    expect(result).toEqual({
      exitCode: 3,
      stdout: 'piped\nhello from /workspace/nested\n',
      stderr: 'oops\n',
      timedOut: false,
      droppedBytes: 0,
    });
  });

  it('takes stdin of any size, and says when its working directory does not exist', async () => {
    const big = await sandbox.exec(['wc', '-c'], { stdin: 'x'.repeat(3 * 1024 * 1024) });
    expect(big.stdout).toBe(`${3 * 1024 * 1024}\n`);
    const lost = await sandbox.exec(['pwd'], { cwd: '/nowhere' });
    expect(lost.exitCode).toBe(126);
    expect(lost.stderr).toMatch(/can't cd to \/nowhere/);
  });

  it('keeps at most maxOutputBytes of each stream and counts the rest', async () => {
    const result = await sandbox.exec(
      ['python3', '-c', 'import sys; sys.stdout.write("x" * 100000); sys.stderr.write("y" * 10)'],
      {
        maxOutputBytes: 1000,
      },
    );
    expect(result.stdout).toBe('x'.repeat(1000));
    expect(result.stderr).toBe('y'.repeat(10));
    expect(result.droppedBytes).toBe(99_000);
  });

  it('is stopped by an abort, with what it started', async () => {
    const controller = new AbortController();
    const pending = sandbox.exec(['sh', '-c', 'echo started; sleep 60'], { signal: controller.signal });
    setTimeout(() => controller.abort(), 300);
    expect(await pending).toMatchObject({ exitCode: null, timedOut: false, stdout: 'started\n' });
    expect((await sandbox.exec(['ps', '-eo', 'args'])).stdout).not.toContain('sleep 60');
  });

  it('is stopped by an abort given while it is still starting, with what it starts', async () => {
    for (const after of [0, 20, 50]) {
      const controller = new AbortController();
      const pending = sandbox.exec(['sh', '-c', `echo started; sleep ${61 + after}`], { signal: controller.signal });
      setTimeout(() => controller.abort(), after);
      expect(await pending).toMatchObject({ exitCode: null, timedOut: false });
      // Whatever started after the abort is gone too (the exec's process may begin after its stream opened).
      const ps = await sandbox.exec(['ps', '-eo', 'args']);
      expect(ps.stdout).not.toContain(`sleep ${61 + after}`);
    }
  });

  it('has no capabilities and cannot gain privileges (setuid programs do not raise them)', async () => {
    const status = await sandbox.exec(['grep', '-E', '^(CapEff|CapBnd|NoNewPrivs):', '/proc/self/status']);
    expect(status.stdout).toMatch(/^CapEff:\s+0{16}$/m);
    expect(status.stdout).toMatch(/^CapBnd:\s+0{16}$/m);
    expect(status.stdout).toMatch(/^NoNewPrivs:\s+1$/m);
  });

  it("runs as a non-root user without the host's environment", async () => {
    process.env.HOST_SECRET_FOR_TEST = 'sk-secret';
    try {
      const result = await sandbox.exec(['sh', '-c', 'id -u; env']);
      const [uid] = result.stdout.split('\n');
      expect(Number(uid)).toBeGreaterThan(0);
      expect(result.stdout).not.toContain('sk-secret');
    } finally {
      delete process.env.HOST_SECRET_FOR_TEST;
    }
  });
});
