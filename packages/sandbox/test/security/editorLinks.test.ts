// Code in the container plants symbolic links in the workspace; the editor (str_replace_editor
// through the sandbox's file operations) and the file operations themselves must not follow them
// out of it — not to the container's root-only files, not to files elsewhere in the container.
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createStrReplaceEditor, type SandboxProvider } from '@openmanus/core';
import { type ToolSession, toolSession } from '@openmanus/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDockerSandboxProvider } from '../../src/dockerProvider.js';
import type { DockerSandbox } from '../../src/dockerSandbox.js';
import { dockerReady, SETUP_TIMEOUT, TEST_IMAGE } from '../docker.js';

let sandbox: DockerSandbox | undefined;
let session: ToolSession;
/** A host directory for copies out of the container. */
let host: string;
const inside = () => sandbox as DockerSandbox;
const edit = (args: Record<string, unknown>) => session.call(args);
/** Runs a shell command in the container as its user; returns its stdout. */
const sh = async (script: string) => {
  const result = await inside().exec(['sh', '-c', script]);
  expect(result.stderr).toBe('');
  return result.stdout;
};

beforeAll(async () => {
  await dockerReady();
  host = await mkdtemp(join(tmpdir(), 'editor-links-'));
  const docker = createDockerSandboxProvider({ image: TEST_IMAGE, memoryLimit: '256m' });
  // The session's sandbox, kept to plant links in it as the model's code would.
  const provider: SandboxProvider = {
    name: docker.name,
    create: async (request) => {
      sandbox = await docker.create(request);
      return sandbox;
    },
  };
  session = toolSession(createStrReplaceEditor({ workspace: '/workspace' }), { sandbox: provider });
  await edit({ command: 'create', path: '/workspace/start.txt', file_text: 'start\n' });
  await sh(
    'echo hello > /tmp/victim.txt && ln -s / /workspace/r && ln -s /tmp /workspace/t && ' +
      'ln -s /etc/shadow /workspace/shadow && ln -s /tmp/victim.txt /workspace/v && ln -s /tmp/new.txt /workspace/dangling',
  );
}, SETUP_TIMEOUT);
afterAll(async () => {
  await session?.close();
  await rm(host, { recursive: true, force: true });
});

const victim = () => sh('cat /tmp/victim.txt');

describe('a directory link out of the workspace', () => {
  it('is not followed by view, to a root-only file or a readable one', async () => {
    for (const path of ['/workspace/r/etc/shadow', '/workspace/r/etc/passwd', '/workspace/t/victim.txt']) {
      const { output, isError } = await edit({ command: 'view', path });
      expect(isError).toBe(true);
      expect(output).toMatch(/symbolic link/);
      expect(output).not.toMatch(/root:|hello/);
    }
  });

  it('is not followed by create, str_replace or insert', async () => {
    const create = await edit({ command: 'create', path: '/workspace/t/planted.txt', file_text: 'x' });
    expect(create.isError).toBe(true);
    expect(await sh('ls /tmp')).not.toContain('planted.txt');
    const replace = await edit({
      command: 'str_replace',
      path: '/workspace/t/victim.txt',
      old_str: 'hello',
      new_str: 'bye',
    });
    expect(replace.isError).toBe(true);
    const insert = await edit({ command: 'insert', path: '/workspace/t/victim.txt', insert_line: 0, new_str: 'bye' });
    expect(insert.isError).toBe(true);
    expect(await victim()).toBe('hello\n');
  });

  it("is refused by the sandbox's file operations themselves, whatever the caller checked before", async () => {
    await expect(inside().readFile('/workspace/r/etc/shadow')).rejects.toMatchObject({ code: 'ELOOP' });
    await expect(inside().list('/workspace/r/etc')).rejects.toMatchObject({ code: 'ELOOP' });
    await expect(inside().writeFile('/workspace/t/victim.txt', 'bye')).rejects.toMatchObject({ code: 'ELOOP' });
    await expect(inside().writeFile('/workspace/r/tmp/planted/x.txt', 'x')).rejects.toMatchObject({ code: 'ELOOP' });
    await expect(inside().remove('/workspace/t/victim.txt')).rejects.toMatchObject({ code: 'ELOOP' });
    await expect(inside().copyOut('/workspace/r/etc/shadow', join(host, 'shadow'))).rejects.toMatchObject({
      code: 'ELOOP',
    });
    await expect(readdir(host)).resolves.toEqual([]);
    await writeFile(join(host, 'planted'), 'x');
    await expect(inside().copyIn(join(host, 'planted'), '/workspace/t/planted')).rejects.toMatchObject({
      code: 'ELOOP',
    });
    expect(await victim()).toBe('hello\n');
    expect(await sh('ls /tmp')).not.toContain('planted');
  });
});

describe('a file link', () => {
  it('is not followed by view, create, str_replace or insert', async () => {
    const view = await edit({ command: 'view', path: '/workspace/shadow' });
    expect(view.isError).toBe(true);
    expect(view.output).not.toContain('root:');
    expect((await edit({ command: 'create', path: '/workspace/dangling', file_text: 'x' })).isError).toBe(true);
    const replace = await edit({ command: 'str_replace', path: '/workspace/v', old_str: 'hello', new_str: 'bye' });
    expect(replace.isError).toBe(true);
    expect((await edit({ command: 'insert', path: '/workspace/v', insert_line: 0, new_str: 'bye' })).isError).toBe(
      true,
    );
    expect(await victim()).toBe('hello\n');
    expect(await sh('ls /tmp')).not.toContain('new.txt');
  });

  it("is refused by the sandbox's file operations themselves (a link swapped in after the editor looked)", async () => {
    await expect(inside().readFile('/workspace/shadow')).rejects.toMatchObject({ code: 'ELOOP' });
    await expect(inside().readFile('/workspace/v')).rejects.toMatchObject({ code: 'ELOOP' });
    await expect(inside().writeFile('/workspace/v', 'bye')).rejects.toMatchObject({ code: 'ELOOP' });
    await expect(inside().writeFile('/workspace/dangling', 'x')).rejects.toMatchObject({ code: 'ELOOP' });
    expect(await victim()).toBe('hello\n');
    expect(await sh('ls /tmp')).not.toContain('new.txt');
    // Removing a link removes the link, not what it points to.
    await inside().remove('/workspace/v');
    expect(await victim()).toBe('hello\n');
  });

  it('leaves links that stay inside the workspace usable as directories', async () => {
    await sh('mkdir -p /workspace/real && ln -s real /workspace/alias');
    await inside().writeFile('/workspace/alias/through.txt', 'through');
    expect(Buffer.from(await inside().readFile('/workspace/real/through.txt')).toString()).toBe('through');
    const view = await edit({ command: 'view', path: '/workspace/alias/through.txt' });
    expect(view).toMatchObject({ isError: false, output: expect.stringContaining('through') });
  });
});

describe('a file the editor creates', () => {
  it("belongs to the container's user, who can append to it", async () => {
    expect((await edit({ command: 'create', path: '/workspace/made/new.txt', file_text: 'first\n' })).isError).toBe(
      false,
    );
    const [uid, owner, dirOwner] = (await sh('id -u; stat -c %u /workspace/made/new.txt /workspace/made')).split('\n');
    expect(owner).toBe(uid);
    expect(dirOwner).toBe(uid);
    expect(await sh('echo more >> /workspace/made/new.txt && cat /workspace/made/new.txt')).toBe('first\nmore\n');
  });
});
