// A host process that crashes with a sandbox open leaves its container behind; the next provider
// to start removes it (and the temporary workspace made for it), and leaves live processes' alone.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDockerSandboxProvider } from '../src/dockerProvider.js';
import { docker, dockerReady, SETUP_TIMEOUT, TEST_IMAGE } from './docker.js';

const packageDir = join(import.meta.dirname, '..');
let out: string;

/** The package's sources and the child, as plain JavaScript inside the package (so its imports resolve). */
async function transpile(): Promise<string> {
  const dir = await mkdtemp(join(packageDir, 'test', '.children-'));
  const files = [
    ...(await readdir(join(packageDir, 'src'))).map((name) => `src/${name}`),
    'test/children/holdSandbox.ts',
  ];
  for (const file of files) {
    const { outputText } = ts.transpileModule(await readFile(join(packageDir, file), 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
    });
    await mkdir(join(dir, dirname(file)), { recursive: true });
    await writeFile(join(dir, file.replace(/\.ts$/, '.js')), outputText);
  }
  return dir;
}

/** Starts the child, waits for its container id, and kills it with SIGKILL (no cleanup runs). */
async function crashWithSandbox(workspace?: string): Promise<string> {
  const child = spawn(
    process.execPath,
    [join(out, 'test', 'children', 'holdSandbox.js'), TEST_IMAGE, ...(workspace ? [workspace] : [])],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const id = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (chunk) => {
      text += chunk;
      if (text.includes('\n')) resolve(text.trim());
    });
    child.on('exit', (code) => reject(new Error(`the child exited (${code}) before making its sandbox`)));
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  return id;
}

const exists = (id: string) =>
  docker
    .getContainer(id)
    .inspect()
    .then(() => true)
    .catch(() => false);

beforeAll(async () => {
  await dockerReady();
  out = await transpile();
}, SETUP_TIMEOUT);
afterAll(() => rm(out, { recursive: true, force: true }));

describe("a crashed process's sandboxes", () => {
  it('are removed when the next provider makes its first sandbox, with their temporary workspaces', async () => {
    const orphan = await crashWithSandbox();
    const info = await docker.getContainer(orphan).inspect();
    const tempWorkspace = info.Mounts[0]?.Source ?? '';
    expect(tempWorkspace).toContain('openmanus-sandbox-');
    expect(await exists(orphan)).toBe(true);

    const sandbox = await createDockerSandboxProvider({ image: TEST_IMAGE }).create({
      runId: 'next-start',
      signal: new AbortController().signal,
    });
    try {
      expect(await exists(orphan)).toBe(false);
      await expect(stat(tempWorkspace)).rejects.toThrow(/ENOENT/);
    } finally {
      await sandbox.close();
    }
  });

  it("are found by reapOrphans, which leaves a live process's sandbox alone and gives a lent workspace back", async () => {
    const workspace = await mkdtemp(join(tmpdir(), 'crashed-workspace-'));
    try {
      await writeFile(join(workspace, 'kept.txt'), 'mine');
      const provider = createDockerSandboxProvider({ image: TEST_IMAGE });
      const live = await provider.create({ runId: 'live', signal: new AbortController().signal });
      try {
        const orphan = await crashWithSandbox(workspace);
        const { Name } = await docker.getContainer(orphan).inspect();
        expect((await stat(join(workspace, 'kept.txt'))).uid).not.toBe(process.getuid?.());
        expect(await provider.reapOrphans()).toEqual([Name.replace(/^\//, '')]);
        expect(await exists(orphan)).toBe(false);
        expect(await exists(live.containerId)).toBe(true);
        expect((await stat(join(workspace, 'kept.txt'))).uid).toBe(process.getuid?.());
        expect(await readFile(join(workspace, 'kept.txt'), 'utf8')).toBe('mine');
      } finally {
        await live.close();
      }
    } finally {
      await rm(workspace, { recursive: true, force: true });
    }
  });

  it("are removed even when left paused, and a live process's paused sandbox holds up no new one", async () => {
    const orphan = await crashWithSandbox();
    await docker.getContainer(orphan).pause();
    const live = await createDockerSandboxProvider({ image: TEST_IMAGE }).create({
      runId: 'paused-live',
      signal: new AbortController().signal,
    });
    try {
      await docker.getContainer(live.containerId).pause();
      const fresh = await createDockerSandboxProvider({ image: TEST_IMAGE }).create({
        runId: 'after-paused',
        signal: new AbortController().signal,
      });
      try {
        expect(await exists(orphan)).toBe(false);
        expect((await fresh.exec(['echo', 'new'])).stdout).toBe('new\n');
        expect(await exists(live.containerId)).toBe(true);
      } finally {
        await fresh.close();
      }
    } finally {
      await live.close();
    }
    expect(await exists(live.containerId)).toBe(false);
  });
});
