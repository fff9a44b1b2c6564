// Code in the container tries to take the run down with it: a fork bomb that fills the pids
// limit, a container left frozen, a daemon that stops answering. Every command must end in bounded
// time, the sandbox go on (or be replaced), and no Docker call wait forever.
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { createConnection, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restartable } from '../../src/containerRestart.js';
import { createDockerSandboxProvider } from '../../src/dockerProvider.js';
import type { DockerSandbox } from '../../src/dockerSandbox.js';
import { hostViewOf, processesOf } from '../../src/hostProcesses.js';
import { docker, dockerReady, SETUP_TIMEOUT, TEST_IMAGE } from '../docker.js';

const request = (runId: string) => ({ runId, signal: new AbortController().signal });
const FORK_BOMB = ['python3', '-c', 'import os\nwhile True:\n  try: os.fork()\n  except OSError: pass'];

let sandbox: DockerSandbox;
beforeAll(async () => {
  await dockerReady();
  // The default pids limit (256), as a run gets it.
  sandbox = await createDockerSandboxProvider({ image: TEST_IMAGE, memoryLimit: '512m' }).create(request('bombed'));
}, SETUP_TIMEOUT);
afterAll(() => sandbox?.close());

describe('a fork bomb', () => {
  it('is timed out and killed, run after run, and the sandbox runs the next command', async () => {
    for (let run = 0; run < 3; run++) {
      const bomb = await sandbox.exec(FORK_BOMB, { timeoutMs: 2000 });
      expect(bomb).toMatchObject({ timedOut: true, exitCode: null, signal: 'SIGKILL' });
      expect((await sandbox.exec(['echo', 'alive'])).stdout).toBe('alive\n');
      const ps = await sandbox.exec(['ps', '-eo', 'stat=,args=']);
      const alive = ps.stdout.split('\n').filter((line) => !line.trim().startsWith('Z'));
      expect(alive).not.toContainEqual(expect.stringContaining('os.fork'));
    }
    // The container was never left frozen.
    expect((await docker.getContainer(sandbox.containerId).inspect()).State.Paused).toBe(false);
  }, 240_000);
});

describe('the last resort: a restart', () => {
  it.each([
    ['seen from the host', true],
    ['through the daemon only (a remote one)', false],
  ])(
    'ends a fork bomb at once, %s, and the container runs again',
    async (_, local) => {
      const other = await createDockerSandboxProvider({ image: TEST_IMAGE, memoryLimit: '256m' }).create(
        request('restarted'),
      );
      try {
        const container = docker.getContainer(other.containerId);
        const before = (await container.inspect()).State.Pid;
        // Not a call of the sandbox: no marker, nothing but the restart can end it.
        const bomb = await container.exec({ Cmd: FORK_BOMB, User: (await container.inspect()).Config.User });
        await bomb.start({ Detach: true });
        const seen = await hostViewOf(before, container.id);
        if (!seen) throw new Error('the test needs a local daemon');
        while ((await processesOf(seen)).length < 50) await new Promise((resolve) => setTimeout(resolve, 50));
        const life = restartable(container, local ? seen : undefined);
        await life.restart();
        const after = await container.inspect();
        expect(after.State).toMatchObject({ Running: true, Paused: false });
        expect(after.State.Pid).not.toBe(before);
        expect(life.host()?.initPid).toBe(local ? after.State.Pid : undefined);
        const ps = await other.exec(['ps', '-eo', 'args=']);
        expect(ps.stdout).not.toContain('os.fork');
        expect((await other.exec(['echo', 'alive'])).stdout).toBe('alive\n');
      } finally {
        await other.close();
      }
    },
    120_000,
  );
});

describe('a container left paused', () => {
  it('is thawed by the next command', async () => {
    await docker.getContainer(sandbox.containerId).pause();
    expect((await sandbox.exec(['echo', 'thawed'])).stdout).toBe('thawed\n');
    expect((await docker.getContainer(sandbox.containerId).inspect()).State.Paused).toBe(false);
  });
});

/**
 * The daemon's socket behind a proxy that can go silent: from then on nothing a client sends
 * reaches the daemon (on new connections and on kept-alive ones), so no request is answered.
 */
async function silenceableDaemon() {
  const path = join(tmpdir(), `openmanus-silent-docker-${randomBytes(4).toString('hex')}.sock`);
  let silent = false;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const daemon = createConnection('/var/run/docker.sock');
    for (const socket of [client, daemon]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    }
    client.on('data', (chunk) => {
      if (!silent) daemon.write(chunk);
    });
    daemon.on('data', (chunk) => client.write(chunk));
    client.on('end', () => daemon.end());
    daemon.on('end', () => client.end());
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return {
    docker: new Docker({ socketPath: path }),
    silence: () => {
      silent = true;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
      await rm(path, { force: true });
    },
  };
}

describe('a daemon that stops answering', () => {
  it('fails commands, orphan reaping and new sandboxes with a time-out instead of hanging', async () => {
    const daemon = await silenceableDaemon();
    const provider = createDockerSandboxProvider({ image: TEST_IMAGE, docker: daemon.docker });
    const held = await provider.create(request('silenced'));
    try {
      daemon.silence();
      await expect(held.exec(['echo', 'never'])).rejects.toThrow(/docker: exec create got no answer within \d+ s/);
      await expect(provider.reapOrphans()).rejects.toThrow(/docker: list got no answer/);
      await expect(provider.create(request('never'))).rejects.toThrow(/got no answer/);
    } finally {
      await daemon.close();
      // Removed through the daemon itself, the proxy being silent.
      await docker
        .getContainer(held.containerId)
        .remove({ force: true })
        .catch(() => {});
      await held.close().catch(() => {});
    }
  }, 240_000);
});
