import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { probeBwrap } from '../src/sandbox/bwrap.js';
import { createLocalSandboxProvider } from '../src/sandbox/localProvider.js';
import type { Sandbox, SandboxProcess } from '../src/shell/sandboxPort.js';
import { createToolRun } from '../src/shell/toolRun.js';
import { toolSession } from '../src/testing/toolSession.js';
import { createPythonExecute } from '../src/tools/pythonExecute.js';
import { createStrReplaceEditor } from '../src/tools/strReplaceEditor.js';
import { tempWorkspace } from './toolHelpers.js';

const bwrapWorks = (await probeBwrap(['/bin/sh', '-c', 'echo ok'])).ok;
const isolations = [
  { isolation: 'bwrap' as const, runs: bwrapWorks },
  { isolation: 'none' as const, runs: true },
];

const signal = new AbortController().signal;
const open = (isolation: 'bwrap' | 'none', workspace?: string) =>
  createLocalSandboxProvider({ isolation }).create({ runId: 'r', signal, ...(workspace ? { workspace } : {}) });

/** Everything a process wrote to stdout until `done` says it has all it needs. */
function collect(process: SandboxProcess, done: (text: string) => boolean): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    process.onStdout((chunk) => {
      text += Buffer.from(chunk).toString();
      if (done(text)) resolve(text);
    });
  });
}

describe.each(isolations)('the local sandbox (isolation $isolation)', ({ isolation, runs }) => {
  let workspace: string;
  let sandbox: Sandbox;
  beforeAll(async () => {
    workspace = await tempWorkspace();
    if (runs) sandbox = await open(isolation, workspace);
  });
  afterAll(() => sandbox?.close());

  it.runIf(runs)('runs a command in the workspace: stdin, exit code, both streams, extra variables', async () => {
    expect(sandbox.workspace).toBe(workspace);
    expect(sandbox.provider).toBe(isolation === 'bwrap' ? 'bwrap' : 'local');
    const result = await sandbox.exec(['/bin/sh', '-c', 'pwd; cat; echo "$GREETING" >&2; exit 3'], {
      stdin: 'from stdin\n',
      env: { GREETING: 'hello' },
    });
    expect(result).toEqual({
      exitCode: 3,
      stdout: `${workspace}\nfrom stdin\n`,
      stderr: 'hello\n',
      timedOut: false,
      droppedBytes: 0,
    });
  });

  it.runIf(runs)('caps output, counting what it dropped; names the signal that ended a command', async () => {
    const flood = await sandbox.exec(['/bin/sh', '-c', 'head -c 100000 /dev/zero | tr "\\0" x'], {
      maxOutputBytes: 1000,
    });
    expect(flood.stdout).toBe('x'.repeat(1000));
    expect(flood.droppedBytes).toBe(99_000);
    const killed = await sandbox.exec(['/bin/sh', '-c', 'kill -ABRT $$']);
    expect(killed).toMatchObject({ exitCode: null, signal: 'SIGABRT' });
  });

  it.runIf(runs)('kills a command at its timeout, with what it left in the background', async () => {
    const marker = `bg-${Date.now()}`;
    // Ten minutes of sleep: without the kill, the test's own time-out would fail it.
    const result = await sandbox.exec(['/bin/sh', '-c', `(exec -a ${marker} sleep 600) & sleep 600`], {
      timeoutMs: 300,
    });
    expect(result.timedOut).toBe(true);
    expect(result.exitCode).toBeNull();
    const { processesMatching } = await import('../src/testing/index.js');
    expect(processesMatching(marker)).toEqual([]);
  });

  it.runIf(runs)('starts commands only inside the workspace', async () => {
    await mkdir(join(workspace, 'sub'), { recursive: true });
    expect((await sandbox.exec(['pwd'], { cwd: 'sub' })).stdout).toBe(`${workspace}/sub\n`);
    await expect(sandbox.exec(['pwd'], { cwd: '/etc' })).rejects.toThrow(/outside the workspace/);
  });

  it.runIf(runs)('reads, writes, lists and removes files of its workspace, and nothing outside it', async () => {
    await sandbox.writeFile('notes/a.txt', 'alpha');
    await sandbox.writeFile(join(workspace, 'notes/a.txt'), 'beta');
    expect(Buffer.from(await sandbox.readFile('notes/a.txt')).toString()).toBe('beta');
    expect(await sandbox.list('notes')).toEqual([{ name: 'a.txt', type: 'file', size: 4 }]);
    const outside = await mkdtemp(join(tmpdir(), 'openmanus-outside-'));
    try {
      await writeFile(join(outside, 'secret'), 'host secret');
      await symlink(outside, join(workspace, 'link'));
      await expect(sandbox.readFile('link/secret')).rejects.toThrow(/outside the workspace/);
      await expect(sandbox.writeFile('link/new', 'x')).rejects.toThrow(/outside the workspace/);
      await expect(sandbox.readFile('/etc/hostname')).rejects.toThrow(/outside the workspace/);
      await expect(sandbox.remove('../')).rejects.toThrow(/outside the workspace/);
      expect(existsSync(join(outside, 'new'))).toBe(false);
      await sandbox.remove('link');
      expect(existsSync(join(outside, 'secret'))).toBe(true);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
    await sandbox.remove('notes');
    expect(existsSync(join(workspace, 'notes'))).toBe(false);
  });

  it.runIf(runs)('copies files and directories in and out', async () => {
    const host = await mkdtemp(join(tmpdir(), 'openmanus-copy-'));
    try {
      await mkdir(join(host, 'in/deep'), { recursive: true });
      await writeFile(join(host, 'in/deep/f.txt'), 'copied');
      await sandbox.copyIn(join(host, 'in'), 'copied');
      expect(await readFile(join(workspace, 'copied/deep/f.txt'), 'utf8')).toBe('copied');
      await sandbox.copyOut('copied', join(host, 'out'));
      expect(await readFile(join(host, 'out/deep/f.txt'), 'utf8')).toBe('copied');
    } finally {
      await rm(host, { recursive: true, force: true });
    }
  });

  it.runIf(runs)('keeps a long-lived shell: input in, output out, interrupt, and kill ends it', async () => {
    const shell = await sandbox.spawn(['/bin/bash', '--noprofile', '--norc']);
    const exited = new Promise<number | null>((resolve) => shell.onExit((code) => resolve(code)));
    const output = collect(shell, (text) => text.includes('done'));
    shell.write('cd /tmp 2>/dev/null; cd "$OLDPWD"; echo "$PWD"; echo done\n');
    expect(await output).toBe(`${workspace}\ndone\n`);
    await shell.kill();
    expect(await exited).not.toBe(0);
  });
});

describe('the local provider', () => {
  it('gives a run without a workspace a temporary one, removed with its sandbox; two runs never share one', async () => {
    const provider = createLocalSandboxProvider({ isolation: bwrapWorks ? 'bwrap' : 'none' });
    const [a, b] = await Promise.all(['a', 'b'].map((runId) => provider.create({ runId, signal })));
    if (!a || !b) throw new Error('no sandbox');
    expect(a.workspace).not.toBe(b.workspace);
    await a.exec(['/bin/sh', '-c', 'echo mine > only-a.txt']);
    expect((await b.exec(['/bin/sh', '-c', 'ls'])).stdout).toBe('');
    await expect(b.readFile(join(a.workspace, 'only-a.txt'))).rejects.toThrow(/outside the workspace/);
    await Promise.all([a.close(), b.close()]);
    expect(existsSync(a.workspace)).toBe(false);
    await expect(a.exec(['true'])).rejects.toThrow(/removed/);
  });

  it('refuses clearly when bubblewrap is asked for and cannot run; says once when it falls back', async () => {
    // A fresh copy of the library: its memory of earlier probes starts empty.
    vi.resetModules();
    const library = (await import('../src/index.js')) as typeof import('../src/index.js');
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    const notices: string[] = [];
    try {
      const refused = library.createLocalSandboxProvider({ isolation: 'bwrap' }).create({ runId: 'r', signal });
      await expect(refused).rejects.toThrow(
        /^the bubblewrap sandbox was asked for but cannot run here \(bwrap is not installed\), so nothing was run/,
      );
      const fallback = library.createLocalSandboxProvider({ onNotice: (m) => notices.push(m) });
      const [one, two] = [await fallback.create({ runId: 'a', signal }), await fallback.create({ runId: 'b', signal })];
      expect(one.provider).toBe('local');
      await Promise.all([one.close(), two.close()]);
    } finally {
      process.env.PATH = path;
    }
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatch(
      /^sandbox: bubblewrap is not available \(bwrap is not installed\)\..*Install bubblewrap/,
    );
  });

  it('python_execute and str_replace_editor of one tool run share its sandbox: what Python writes the editor edits', async () => {
    const provider = createLocalSandboxProvider({ isolation: bwrapWorks ? 'bwrap' : 'none' });
    const run = createToolRun({ sandbox: provider });
    try {
      // The tools' own workspace is not where they work: the sandbox's is.
      // A name of its own: a directory left by another process (a mutant under test, say) must not count.
      const unused = join(tmpdir(), `openmanus-never-used-${randomUUID()}`);
      const python = createPythonExecute({ workspace: unused });
      const editor = createStrReplaceEditor({ workspace: unused });
      const wrote = await run.call(python, {
        code: 'import os\nopen("made.txt", "w").write("one\\n")\nprint(os.getcwd())',
      });
      if (wrote.type !== 'toolCompleted' || wrote.isError) throw new Error(`python failed: ${JSON.stringify(wrote)}`);
      const where = wrote.output;
      const path = join(where, 'made.txt');
      const edited = await run.call(editor, { command: 'str_replace', path, old_str: 'one', new_str: 'two' });
      expect(edited).toMatchObject({ type: 'toolCompleted', output: expect.stringMatching(/has been edited/) });
      expect(await run.call(python, { code: 'print(open("made.txt").read())' })).toMatchObject({
        type: 'toolCompleted',
        output: 'two',
      });
      // A link the code planted, leading out: the editor neither reads nor writes through it.
      const outside = await mkdtemp(join(tmpdir(), 'openmanus-outside-'));
      try {
        await writeFile(join(outside, 'secret'), 'host secret');
        await run.call(python, { code: `import os\nos.symlink(${JSON.stringify(outside)}, "out")` });
        const viewed = await run.call(editor, { command: 'view', path: join(where, 'out/secret') });
        expect(viewed).toMatchObject({ isError: true, output: expect.stringMatching(/outside the workspace/) });
        const created = await run.call(editor, {
          command: 'create',
          path: join(where, 'out/new.txt'),
          file_text: 'x',
        });
        expect(created).toMatchObject({ isError: true, output: expect.stringMatching(/outside the workspace/) });
        expect(existsSync(join(outside, 'new.txt'))).toBe(false);
      } finally {
        await rm(outside, { recursive: true, force: true });
      }
      expect(existsSync(unused)).toBe(false);
      await run.close();
      expect(existsSync(where)).toBe(false);
    } finally {
      await run.close();
    }
  });

  it('a tool session with a sandbox runs its tool there, and removes the sandbox when it closes', async () => {
    const session = toolSession(createPythonExecute({ workspace: join(tmpdir(), 'openmanus-never-used') }), {
      sandbox: createLocalSandboxProvider({ isolation: bwrapWorks ? 'bwrap' : 'none' }),
    });
    const { output, isError } = await session.call({ code: 'import os\nprint(os.getcwd())' });
    expect(isError).toBe(false);
    expect(output).toMatch(/\/openmanus-sandbox-[^/]+$/);
    expect(existsSync(output)).toBe(true);
    await session.close();
    expect(existsSync(output)).toBe(false);
  });
});
