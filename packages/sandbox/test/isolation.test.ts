// What the container holds back, against a real daemon: memory and CPU limits, no network, no
// process of a call left running after it, and two runs that never see each other.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDockerSandboxProvider } from '../src/dockerProvider.js';
import type { DockerSandbox } from '../src/dockerSandbox.js';
import { docker, dockerReady, SETUP_TIMEOUT, TEST_IMAGE } from './docker.js';

const request = (runId: string, workspace?: string) => ({
  runId,
  signal: new AbortController().signal,
  ...(workspace ? { workspace } : {}),
});

let limited: DockerSandbox;
beforeAll(async () => {
  await dockerReady();
  limited = await createDockerSandboxProvider({ image: TEST_IMAGE, memoryLimit: '64m', cpuLimit: 0.25 }).create(
    request('limits'),
  );
}, SETUP_TIMEOUT);
afterAll(() => limited?.close());

/** The processes alive in the sandbox (zombies left out), as `ps` shows them. */
async function running(sandbox: DockerSandbox): Promise<string[]> {
  const ps = await sandbox.exec(['ps', '-eo', 'stat=,args=']);
  expect(ps.exitCode).toBe(0);
  return ps.stdout.split('\n').filter((line) => line.trim() && !line.trim().startsWith('Z'));
}

describe('limits', () => {
  it('kills a memory hog past memory_limit, and the sandbox goes on', async () => {
    const hog = await limited.exec(['python3', '-c', 'x = bytearray(256 * 1024 * 1024); print("survived")']);
    expect(hog.stdout).toBe('');
    expect(hog).toMatchObject({ exitCode: null, signal: 'SIGKILL', timedOut: false });
    const info = await docker.getContainer(limited.containerId).inspect();
    expect(info.HostConfig.Memory).toBe(64 * 1024 * 1024);
    expect((await limited.exec(['echo', 'alive'])).stdout).toBe('alive\n');
  });

  it('throttles a CPU hog to cpu_limit (CPU time from the cgroup, not wall time)', async () => {
    // CPU time the container's cgroup used (v1 cpuacct, else v2 cpu.stat), in ns, around 2 s of a busy loop.
    const script = `usage() { cat /sys/fs/cgroup/cpuacct/cpuacct.usage 2>/dev/null || echo $(( $(sed -n 's/^usage_usec //p' /sys/fs/cgroup/cpu.stat) * 1000 )); }
      u0=$(usage); t0=$(date +%s%N)
      timeout 2 python3 -c 'while True: pass'
      u1=$(usage); t1=$(date +%s%N)
      echo $(( u1 - u0 )) $(( t1 - t0 ))`;
    const result = await limited.exec(['sh', '-c', script]);
    const [cpu = 0, wall = 1] = result.stdout.trim().split(' ').map(Number);
    const share = cpu / wall;
    expect(share).toBeGreaterThan(0.02);
    expect(share).toBeLessThan(0.4);
  });

  it('stops a fork bomb at the pids limit, and kills it when its time is up', async () => {
    const provider = createDockerSandboxProvider({ image: TEST_IMAGE, memoryLimit: '512m', pidsLimit: 48 });
    const bombed = await provider.create(request('fork-bomb'));
    try {
      const info = await docker.getContainer(bombed.containerId).inspect();
      expect(info.HostConfig.PidsLimit).toBe(48);
      const started = Date.now();
      const bomb = await bombed.exec(
        ['python3', '-c', 'import os\nwhile True:\n  try: os.fork()\n  except OSError: pass'],
        {
          timeoutMs: 1000,
        },
      );
      expect(bomb.timedOut).toBe(true);
      expect(Date.now() - started).toBeLessThan(20_000);
      expect(await running(bombed)).not.toContainEqual(expect.stringContaining('os.fork'));
      expect((await bombed.exec(['echo', 'alive'])).stdout).toBe('alive\n');
    } finally {
      await bombed.close();
    }
  });
});

describe('network', () => {
  it('has none: only the loopback interface, and a connect out fails', async () => {
    const info = await docker.getContainer(limited.containerId).inspect();
    expect(info.HostConfig.NetworkMode).toBe('none');
    const interfaces = await limited.exec(['sh', '-c', "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"]);
    expect(interfaces.stdout).toBe('lo\n');
    const connect = await limited.exec([
      'python3',
      '-c',
      "import socket\ntry:\n  socket.create_connection(('1.1.1.1', 80), timeout=3); print('connected')\nexcept OSError as e: print('failed', e)",
    ]);
    expect(connect.stdout).toMatch(/^failed .*unreachable/i);
  });
});

describe('what a call starts ends with it', () => {
  it('leaves no fork tree and no detached daemon behind', async () => {
    const daemon =
      'import os\nif os.fork() == 0:\n  os.setsid()\n  if os.fork() == 0:\n    os.execvp("sleep", ["sleep", "1003"])\n  os._exit(0)\nprint("daemonized")';
    const result = await limited.exec([
      'sh',
      '-c',
      `sleep 1001 & (sleep 1002 &) ; setsid nohup sleep 1004 >/dev/null 2>&1 & python3 -c '${daemon}'; until [ "$(pgrep -c -x sleep)" = 4 ]; do :; done; ps -eo args`,
    ]);
    expect(result.stdout).toContain('daemonized');
    for (const n of [1001, 1002, 1003, 1004]) expect(result.stdout).toContain(`sleep ${n}`);
    const after = await running(limited);
    for (const n of [1001, 1002, 1003, 1004]) expect(after).not.toContainEqual(expect.stringContaining(`sleep ${n}`));
  });

  it('leaves nothing behind when its time limit ends it', async () => {
    const result = await limited.exec(['sh', '-c', 'sleep 1005 & setsid sleep 1006 & sleep 1007'], { timeoutMs: 500 });
    expect(result.timedOut).toBe(true);
    const after = await running(limited);
    for (const n of [1005, 1006, 1007]) expect(after).not.toContainEqual(expect.stringContaining(`sleep ${n}`));
  });

  it('spares what other calls run meanwhile', async () => {
    const other = limited.exec(['sh', '-c', 'sleep 0.8; echo other finished']);
    await limited.exec(['sh', '-c', 'sleep 1008 & echo quick']);
    expect((await other).stdout).toBe('other finished\n');
  });
});

describe('two runs at once', () => {
  let hostA: string;
  let hostB: string;
  afterAll(async () => {
    await rm(hostA, { recursive: true, force: true });
    await rm(hostB, { recursive: true, force: true });
  });

  it("get two containers that never see each other's files or processes", async () => {
    hostA = await mkdtemp(join(tmpdir(), 'run-a-'));
    hostB = await mkdtemp(join(tmpdir(), 'run-b-'));
    const provider = createDockerSandboxProvider({ image: TEST_IMAGE });
    const [a, b] = await Promise.all([
      provider.create(request('run-a', hostA)),
      provider.create(request('run-b', hostB)),
    ]);
    try {
      expect(a.containerId).not.toBe(b.containerId);
      await Promise.all([
        a.exec(['sh', '-c', 'echo secret-a > /workspace/a.txt; echo tmp-a > /tmp/a.txt']),
        b.exec(['sh', '-c', 'echo secret-b > /workspace/b.txt; echo tmp-b > /tmp/b.txt']),
      ]);
      const holdA = a.exec(['sleep', '1']);
      expect((await b.list('/workspace')).map((entry) => entry.name)).toEqual(['b.txt']);
      expect((await b.list('/tmp')).map((entry) => entry.name)).toEqual(['b.txt']);
      expect((await b.exec(['ps', '-eo', 'args'])).stdout).not.toContain('sleep 1');
      expect((await b.exec(['grep', '-rqs', 'secret-a', '/workspace', '/tmp'])).exitCode).toBe(1);
      await holdA;
      expect(await readdir(hostA)).toEqual(['a.txt']);
      expect(await readdir(hostB)).toEqual(['b.txt']);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
