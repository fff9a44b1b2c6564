// The host sandbox when the agent runs as root: model code must never be host root, never leave a
// setuid program, never outlive a killed agent, never leave files in the shared temporary
// directories.
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bwrapCommand } from '../../src/sandbox/bwrap.js';
import { createLocalSandboxProvider } from '../../src/sandbox/localProvider.js';
import type { SandboxProcess } from '../../src/shell/sandboxPort.js';
import { processesMatching } from '../../src/testing/processes.js';
import { toolSession } from '../../src/testing/toolSession.js';
import { createPythonExecute } from '../../src/tools/pythonExecute.js';
import { bwrapWorks, isRoot, tempWorkspace } from '../toolHelpers.js';

const SANDBOX_UIDS = { from: 1_800_000_000, to: 1_801_000_000 };
const inSandboxRange = (uid: number) => uid >= SANDBOX_UIDS.from && uid < SANDBOX_UIDS.to;

const python = (workspace: string, sandbox: 'bwrap' | 'none', code: string, more: { python?: string } = {}) =>
  toolSession(createPythonExecute({ workspace, sandbox, maxTimeoutSec: 60, ...more })).call({ code, timeout: 60 });

const until = async (check: () => boolean, what: string) => {
  for (let i = 0; i < 3000; i++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`never happened: ${what}`);
};

/** The uids (real, effective, saved, fs) of the host processes other than bubblewrap's own working in `dir`. */
const uidsWorkingIn = (dir: string): number[][] =>
  readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((pid) => {
      try {
        if (readlinkSync(`/proc/${pid}/cwd`) !== dir) return [];
        const status = readFileSync(`/proc/${pid}/status`, 'utf8');
        if (/^Name:\s+bwrap$/m.test(status)) return [];
        return [(/^Uid:\s+(.*)$/m.exec(status)?.[1] ?? '').split(/\s+/).map(Number)];
      } catch {
        return [];
      }
    });

const workspaces: string[] = [];
const newWorkspace = async () => {
  const dir = await tempWorkspace();
  workspaces.push(dir);
  return dir;
};
afterEach(async () => {
  for (const dir of workspaces.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe.skipIf(!isRoot || !bwrapWorks)('as root, the bubblewrap sandbox', () => {
  it('is not host root: no /proc/sys file opens for writing, and the code runs as a per-call host uid', async () => {
    const workspace = await newWorkspace();
    const code = [
      'import os, time',
      'writable = []',
      'for top, dirs, files in os.walk("/proc/sys"):',
      '    for name in files:',
      '        try:',
      // Opened and closed, never written: nothing changes even where it opens.
      '            os.close(os.open(os.path.join(top, name), os.O_WRONLY))',
      '            writable.append(os.path.join(top, name))',
      '        except OSError: pass',
      'print(f"writable: {writable}")',
      'try:',
      '    open("/proc/sys/kernel/core_pattern", "w").close()',
      '    print("core_pattern: opened")',
      'except OSError as e:',
      '    print(f"core_pattern: {e.strerror}")',
      'open("running", "w").close()',
      'while not os.path.exists("seen"): time.sleep(0.02)',
    ].join('\n');
    const call = python(workspace, 'bwrap', code);
    await until(() => existsSync(join(workspace, 'running')), 'the code runs');
    // Seen from the host while it runs: the file it made and the process itself.
    const madeBy = lstatSync(join(workspace, 'running')).uid;
    const processes = uidsWorkingIn(workspace);
    await writeFile(join(workspace, 'seen'), '');
    const result = await call;
    expect(result.output).toContain('writable: []');
    expect(result.output).toMatch(/core_pattern: (Permission denied|Read-only file system)/);
    expect(inSandboxRange(madeBy), String(madeBy)).toBe(true);
    expect(processes.length).toBeGreaterThan(0);
    for (const uids of processes) for (const uid of uids) expect(inSandboxRange(uid), String(uids)).toBe(true);
    // Afterwards the host's again.
    expect(lstatSync(join(workspace, 'running')).uid).toBe(0);
  });

  it('gives no command line that would run a program as host root (bwrapCommand without a uid is refused)', async () => {
    const workspace = await newWorkspace();
    await expect(bwrapCommand(['id', '-u'], workspace)).rejects.toThrow(/host root; pass the uid/);
    const [, args] = await bwrapCommand(['id', '-u'], workspace, [], { uid: SANDBOX_UIDS.from });
    expect(args).toContain('--no-new-privs');
  });

  it('still does normal work: files the host then edits, imports, subprocesses, a workspace under /root', async () => {
    const workspace = await mkdtemp(join(homedir(), '.openmanus-root-test-'));
    workspaces.push(workspace);
    const first = await python(
      workspace,
      'bwrap',
      [
        'import json, sqlite3, csv, os, subprocess',
        'os.makedirs("out/deep")',
        'json.dump({"n": 1}, open("out/deep/data.json", "w"))',
        'db = sqlite3.connect("out/db.sqlite"); db.execute("create table t (x)"); db.commit()',
        'print(subprocess.run(["bash", "-c", "echo from bash; id -u"], capture_output=True, text=True).stdout.strip())',
        'open("/tmp/scratch", "w").write("private tmp")',
        'print(open("/tmp/scratch").read())',
      ].join('\n'),
    );
    expect(first.isError, first.output).toBe(false);
    const [bash, uid, scratch] = first.output.split('\n');
    expect(bash).toBe('from bash');
    expect(inSandboxRange(Number(uid))).toBe(true);
    expect(scratch).toBe('private tmp');
    for (const path of ['', 'out', 'out/deep', 'out/deep/data.json', 'out/db.sqlite'])
      expect(lstatSync(join(workspace, path)).uid, path).toBe(0);
    // The host edits what the code wrote, and the next call reads and changes the host's edit.
    const data = join(workspace, 'out/deep/data.json');
    await writeFile(data, JSON.stringify({ n: 2 }));
    const second = await python(
      workspace,
      'bwrap',
      'import json\nd = json.load(open("out/deep/data.json"))\nd["n"] += 1\njson.dump(d, open("out/deep/data.json", "w"))\nprint(d["n"])',
    );
    expect(second).toEqual({ output: '3', isError: false });
    expect(JSON.parse(await readFile(data, 'utf8'))).toEqual({ n: 3 });
    expect(lstatSync(data).uid).toBe(0);
  });

  it("runs a long-lived shell as a leased uid; the host's files are writable by it, and the host's again at its end", async () => {
    const workspace = await newWorkspace();
    const sandbox = await createLocalSandboxProvider({ isolation: 'bwrap', workspace }).create({
      runId: 'root-shell',
      signal: new AbortController().signal,
    });
    let shell: SandboxProcess | undefined;
    let text = '';
    const said = (what: string) => until(() => text.includes(what), what);
    try {
      await writeFile(join(workspace, 'host.txt'), 'host');
      shell = await sandbox.spawn(['/bin/bash', '--noprofile', '--norc']);
      shell.onStdout((chunk) => {
        text += Buffer.from(chunk).toString();
      });
      // A background job keeps working in the workspace after its command is over.
      shell.write('id -u; echo "+shell" >> host.txt; mkdir made; (sleep 0.5; echo later > made/later) & echo one\n');
      await said('one');
      expect(inSandboxRange(Number(text.split('\n')[0])), text).toBe(true);
      await shell.settle?.();
      await until(() => existsSync(join(workspace, 'made/later')), 'the background job writes');
      // What the host makes between commands, the next command can change.
      await writeFile(join(workspace, 'made/by-host.txt'), 'host');
      shell.write('echo "+shell" >> made/by-host.txt && echo two\n');
      await said('two');
      expect(await readFile(join(workspace, 'made/by-host.txt'), 'utf8')).toBe('host+shell\n');
      // A call of another uid on the same workspace takes its turn, and the shell goes on after it.
      expect(await python(workspace, 'bwrap', 'open("made/by-host.txt", "a").write("+python")\nprint("ok")')).toEqual({
        output: 'ok',
        isError: false,
      });
      shell.write('echo "+again" >> made/by-host.txt && echo three\n');
      await said('three');
      expect(await readFile(join(workspace, 'made/by-host.txt'), 'utf8')).toBe('host+shell\n+python+again\n');
    } finally {
      await shell?.kill();
      await sandbox.close();
    }
    for (const path of ['', 'host.txt', 'made', 'made/later', 'made/by-host.txt'])
      expect(lstatSync(join(workspace, path)).uid, path).toBe(0);
    expect(await readFile(join(workspace, 'host.txt'), 'utf8')).toBe('host+shell\n');
  });

  it('never lets a file in the workspace be setuid or setgid, not even while the code runs', async () => {
    const workspace = await newWorkspace();
    const code = [
      'import os, shutil, subprocess, time',
      'shutil.copy("/bin/sh", ".x")',
      // In the background, over and over, every way there is to set the bits.
      'loop = subprocess.Popen(["/bin/sh", "-c", "while :; do chmod 4755 .x; chmod 2755 .x; chmod u+s,g+s .x; cp /bin/sh .y; chmod 6755 .y; install -m 4755 /bin/sh .z; done 2>/dev/null"])',
      'for mode in (0o4755, 0o2755):',
      '    try:',
      '        os.close(os.open(f".o{mode:o}", os.O_CREAT | os.O_WRONLY, mode))',
      '    except OSError as e: print(f"open {mode:o}: {e.strerror}")',
      '    try:',
      '        os.mkdir(f".d{mode:o}", mode)',
      '    except OSError as e: print(f"mkdir {mode:o}: {e.strerror}")',
      'open("looping", "w").close()',
      'while not os.path.exists("polled"): time.sleep(0.02)',
    ].join('\n');
    const call = python(workspace, 'bwrap', code);
    await until(() => existsSync(join(workspace, 'looping')), 'the loop runs');
    const seen: string[] = [];
    let polls = 0;
    // Polls while the loop keeps trying, for at least a few hundred looks at each file.
    while (polls < 400) {
      polls++;
      for (const name of ['.x', '.y', '.z', '.o4755', '.o2755', '.d4755', '.d2755']) {
        try {
          const stat = statSync(join(workspace, name));
          if (stat.mode & 0o6000) seen.push(`${name} mode ${(stat.mode & 0o7777).toString(8)}`);
          if (stat.uid === 0) seen.push(`${name} owned by root`);
        } catch {
          // Not made (yet).
        }
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    await writeFile(join(workspace, 'polled'), '');
    const result = await call;
    expect(seen).toEqual([]);
    expect(result.output).toBe(
      [
        'open 4755: Operation not permitted',
        'mkdir 4755: Operation not permitted',
        'open 2755: Operation not permitted',
        'mkdir 2755: Operation not permitted',
      ].join('\n'),
    );
    expect(statSync(join(workspace, '.x')).mode & 0o6000).toBe(0);
  });
});

// Survivors of an agent that was SIGKILLed mid-call: the next process that sandboxes anything
// sweeps them. A real agent process each time, on the built library.
describe.skipIf(!isRoot)('processes a killed agent left behind', () => {
  const markers: string[] = [];
  afterEach(async () => {
    for (const marker of markers.splice(0)) {
      for (const pid of processesMatching(marker)) process.kill(pid, 'SIGKILL');
      for (const path of leftIn(marker)) await rm(path, { force: true });
    }
  });
  const dist = new URL('../../dist/index.js', import.meta.url).href;
  const testing = new URL('../../dist/testing/index.js', import.meta.url).href;
  const agent = `
    const { createPythonExecute } = await import(${JSON.stringify(dist)});
    const { toolSession } = await import(${JSON.stringify(testing)});
    const tool = createPythonExecute({ workspace: process.env.WS, sandbox: process.env.SANDBOX, python: '/usr/bin/python3', maxTimeoutSec: 120 });
    const result = await toolSession(tool).call({ code: process.env.CODE, timeout: 120 });
    console.log(JSON.stringify(result));
  `;
  /** Starts an agent process (as `uid`) running `code` in `workspace`. */
  const startAgent = (uid: number, sandbox: string, workspace: string, code: string) =>
    spawn(process.execPath, ['--input-type=module', '-e', agent], {
      uid,
      gid: uid,
      cwd: workspace,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', WS: workspace, CODE: code, SANDBOX: sandbox },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
  /** Code that starts a setsid daemon (double fork), makes files in the shared temporary directories, then waits forever. */
  const daemon = (marker: string) =>
    [
      'import os, time',
      'for d in ("/tmp", "/var/tmp", "/dev/shm"):',
      '    try:',
      `        open(f"{d}/openmanus-left-${marker}", "w").close()`,
      '    except OSError: pass',
      'if os.fork() == 0:',
      '    os.setsid()',
      '    if os.fork() == 0:',
      `        os.execvp("python3", ["python3", "-c", "import time; open('started', 'w').close(); time.sleep(600)", "${marker}"])`,
      '    os._exit(0)',
      'time.sleep(600)',
    ].join('\n');
  const leftIn = (marker: string) =>
    ['/tmp', '/var/tmp', '/dev/shm'].map((d) => `${d}/openmanus-left-${marker}`).filter((path) => existsSync(path));

  const modes = [
    // The same user (not root): the processes carry the call's marker, naming the agent.
    { name: 'as the same user', uid: 65534, sandbox: 'none', survives: true },
    // A per-call uid (the agent is root): its lease names the agent.
    { name: 'as a per-call uid', uid: 0, sandbox: 'none', survives: true },
    // bubblewrap's pid namespace dies with the agent; its lease and lent workspace are left.
    ...(bwrapWorks ? [{ name: 'under bubblewrap as root', uid: 0, sandbox: 'bwrap', survives: false }] : []),
  ];
  it.each(modes)('$name are swept when the next agent process starts', async ({ uid, sandbox, survives }) => {
    const marker = `survivor-${randomUUID()}`;
    markers.push(marker);
    const workspace = await newWorkspace();
    await chown(workspace, uid, uid);
    const killed = startAgent(uid, sandbox, workspace, daemon(marker));
    const ended = new Promise((resolve) => killed.on('exit', resolve));
    await until(() => existsSync(join(workspace, 'started')), 'the daemon runs');
    killed.kill('SIGKILL');
    await ended;
    // Killed with the agent, nothing reaped it: it stays (not under bubblewrap, whose pid
    // namespace ends with the agent: waited for, a loaded machine may take a while to end it).
    if (!survives) await until(() => processesMatching(marker).length === 0, 'the daemon ends with bubblewrap');
    expect(processesMatching(marker).length > 0).toBe(survives);
    // The next agent's first call sweeps it, and what its uid left in /tmp and the like.
    const next = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ['--input-type=module', '-e', agent],
        {
          uid,
          gid: uid,
          cwd: workspace,
          env: { PATH: process.env.PATH, WS: workspace, CODE: 'print("next")', SANDBOX: sandbox },
        },
        (error, out) => (error ? reject(error) : resolve(out)),
      ),
    );
    expect(JSON.parse(next)).toEqual({ output: 'next', isError: false });
    expect(processesMatching(marker)).toEqual([]);
    if (uid === 0) expect(leftIn(marker)).toEqual([]);
    // What the killed call made in the workspace is the host's again (under the next call's lending).
    expect(lstatSync(join(workspace, 'started')).uid).toBe(uid);
  });
});

describe.skipIf(!isRoot)('a separate uid per call (no bubblewrap, host is root)', () => {
  it("runs a long-lived shell (isolation none) as a leased uid, never host root; the files are the host's again at its end", async () => {
    const workspace = await newWorkspace();
    const sandbox = await createLocalSandboxProvider({ isolation: 'none', workspace }).create({
      runId: 'root-none-shell',
      signal: new AbortController().signal,
    });
    let shell: SandboxProcess | undefined;
    let text = '';
    try {
      await writeFile(join(workspace, 'host.txt'), 'host');
      shell = await sandbox.spawn(['/bin/bash', '--noprofile', '--norc']);
      shell.onStdout((chunk) => {
        text += Buffer.from(chunk).toString();
      });
      shell.write(
        'id -u; echo "+shell" >> host.txt; { : > /proc/sys/kernel/core_pattern; } 2>/dev/null && echo sysctl: writable || echo sysctl: refused; echo done\n',
      );
      await until(() => text.includes('done'), 'the shell answers');
      expect(inSandboxRange(Number(text.split('\n')[0])), text).toBe(true);
      expect(text).toContain('sysctl: refused');
    } finally {
      await shell?.kill();
      await sandbox.close();
    }
    expect(lstatSync(join(workspace, 'host.txt')).uid).toBe(0);
    expect(await readFile(join(workspace, 'host.txt'), 'utf8')).toBe('host+shell\n');
  });

  it('leaves nothing in /tmp, /var/tmp or /dev/shm; the workspace (in /tmp) and its files stay', async () => {
    const workspace = await newWorkspace();
    const marker = randomUUID();
    const places = ['/tmp', '/var/tmp', '/dev/shm'].map((dir) => `${dir}/openmanus-tmp-${marker}`);
    const code = [
      'import os, tempfile',
      ...places.map((path) => `open(${JSON.stringify(path)}, "w").write("left")`),
      `os.makedirs(${JSON.stringify(`/tmp/openmanus-tmpdir-${marker}/deep`)})`,
      `open(${JSON.stringify(`/tmp/openmanus-tmpdir-${marker}/deep/file`)}, "w").close()`,
      'open("kept.txt", "w").write("kept")',
      'print("done")',
    ].join('\n');
    try {
      expect(await python(workspace, 'none', code)).toEqual({ output: 'done', isError: false });
      for (const path of [...places, `/tmp/openmanus-tmpdir-${marker}`]) expect(existsSync(path), path).toBe(false);
      expect(await readFile(join(workspace, 'kept.txt'), 'utf8')).toBe('kept');
      expect(lstatSync(workspace).uid).toBe(0);
    } finally {
      for (const path of [...places, `/tmp/openmanus-tmpdir-${marker}`])
        await rm(path, { recursive: true, force: true });
    }
  });
});
