// python_execute against hostile code: what the code must not read, reach or leave behind.
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, lstatSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLocalSandboxProvider } from '../../src/sandbox/localProvider.js';
import { processesMatching } from '../../src/testing/processes.js';
import { toolSession } from '../../src/testing/toolSession.js';
import { createPythonExecute } from '../../src/tools/pythonExecute.js';
import { bwrapWorks, isRoot, tempWorkspace } from '../toolHelpers.js';

/** The tool's own isolation, or (`provider:`) the local sandbox provider's, which the tool then runs through. */
type Sandbox = 'auto' | 'bwrap' | 'none' | 'provider:bwrap' | 'provider:none';
type Options = Parameters<typeof createPythonExecute>[0];

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '../../../..');

/** 'auto' is tested as the default: the option left out. */
const call = (
  { sandbox, ...options }: Omit<Options, 'sandbox'> & { sandbox?: Sandbox },
  args: { code: string; timeout?: number },
  signal?: AbortSignal,
) => {
  const isolation = sandbox?.startsWith('provider:')
    ? (sandbox.slice('provider:'.length) as 'bwrap' | 'none')
    : undefined;
  const through = isolation
    ? { sandboxProvider: createLocalSandboxProvider({ isolation, workspace: options.workspace }) }
    : sandbox && sandbox !== 'auto'
      ? { sandbox: sandbox as 'bwrap' | 'none' }
      : {};
  return toolSession(createPythonExecute({ maxTimeoutSec: 20, ...options, ...through })).call(
    args,
    signal ? { signal } : {},
  );
};

/** Lines of `label: value` printed by the code, as an object. */
const answers = (output: string) =>
  Object.fromEntries(
    output
      .split('\n')
      .filter((line) => line.includes(': '))
      .map((line) => [line.slice(0, line.indexOf(': ')), line.slice(line.indexOf(': ') + 2)]),
  );

let workspace: string;
beforeAll(async () => {
  workspace = await tempWorkspace();
});

// The modes that protect the host: bubblewrap where it works, a separate uid where we are root.
const isolatingModes: { name: string; sandbox: Sandbox; runs: boolean }[] = [
  { name: 'bubblewrap', sandbox: 'bwrap', runs: bwrapWorks },
  { name: 'a separate uid (no bubblewrap, host is root)', sandbox: 'none', runs: isRoot },
  { name: 'the default', sandbox: 'auto', runs: bwrapWorks || isRoot },
  { name: 'the local sandbox provider with bubblewrap', sandbox: 'provider:bwrap', runs: bwrapWorks },
  { name: 'the local sandbox provider with a separate uid', sandbox: 'provider:none', runs: isRoot },
];

describe.each(isolatingModes)('the parent environment and memory under $name', ({ sandbox, runs }) => {
  it.skipIf(!runs)("cannot be read: the host's API key stays out of reach", async () => {
    const secret = `sk-test-secret-${randomUUID()}`;
    process.env.OPENAI_API_KEY = secret;
    try {
      const code = [
        'import os',
        `secret = ${JSON.stringify(secret)}.encode()`,
        'def attempt(label, path):',
        '    try:',
        '        with open(path, "rb") as f:',
        '            data = f.read() if path.endswith("environ") else b""',
        "        print(f\"{label}: {'secret' if secret in data else 'opened'}\")",
        '    except OSError as e:',
        '        print(f"{label}: {e.strerror}")',
        // The key set at run time is in the host's memory (and in /proc/<pid>/environ when it was
        // set before the host started): look for it in both.
        'def scan_memory(label, pid):',
        '    try:',
        '        regions = open(f"/proc/{pid}/maps").read().splitlines()',
        '        mem = open(f"/proc/{pid}/mem", "rb")',
        '    except OSError as e:',
        '        return print(f"{label}: {e.strerror}")',
        '    for region in regions:',
        '        span, perms = region.split()[:2]',
        '        start, end = (int(x, 16) for x in span.split("-"))',
        '        if not perms.startswith("rw") or end - start > 256 << 20: continue',
        '        try:',
        '            mem.seek(start)',
        '            if secret in mem.read(end - start): return print(f"{label}: secret")',
        '        except (OSError, OverflowError, ValueError): pass',
        '    print(f"{label}: opened")',
        'attempt("parent environ", f"/proc/{os.getppid()}/environ")',
        `attempt("host environ", "/proc/${process.pid}/environ")`,
        `scan_memory("host memory", ${process.pid})`,
        'leaks = []',
        'for pid in filter(str.isdigit, os.listdir("/proc")):',
        '    try:',
        '        if secret in open(f"/proc/{pid}/environ", "rb").read(): leaks.append(pid)',
        '    except OSError: pass',
        'print(f"environments with the key: {leaks}")',
        'print(f"own environment has it: {secret in str(os.environ).encode()}")',
      ].join('\n');
      const result = await call({ workspace, sandbox }, { code });
      expect(result.isError, result.output).toBe(false);
      expect(result.output).not.toContain(secret);
      const seen = answers(result.output);
      expect(seen['parent environ']).not.toBe('secret');
      expect(seen['host environ']).toMatch(/^(Permission denied|No such file or directory)$/);
      expect(seen['host memory']).toMatch(/^(Permission denied|No such file or directory)$/);
      expect(seen['environments with the key']).toBe('[]');
      expect(seen['own environment has it']).toBe('False');
    } finally {
      delete process.env.OPENAI_API_KEY;
    }
  });
});

describe.skipIf(!bwrapWorks)('what the code sees under bubblewrap', () => {
  let servers: Server[] = [];
  afterEach(() => {
    for (const server of servers) server.close();
    servers = [];
  });
  const listen = (server: Server, where: string | number) =>
    new Promise<void>((resolve) => {
      servers.push(server);
      if (typeof where === 'number') server.listen(where, '127.0.0.1', resolve);
      else server.listen(where, resolve);
    });

  it('no home, no project config, no host /proc, no host sockets; the workspace and computing still work', async () => {
    const secret = `secret-${randomUUID()}`;
    const home = homedir();
    const homeSecret = join(home, `.openmanus-test-secret-${randomUUID()}`);
    const hostDir = await mkdtemp('/var/tmp/openmanus-host-');
    const socketPath = join(hostDir, 'host.sock');
    const abstract = `\0openmanus-test-${randomUUID()}`;
    await writeFile(homeSecret, secret, { mode: 0o600 });
    await writeFile(join(hostDir, 'config.toml'), `api_key = "${secret}"`);
    for (const where of [socketPath, abstract])
      await listen(
        createServer((s) => s.end(secret)),
        where,
      );
    const tcp = createServer((s) => s.end(secret));
    await listen(tcp, 0);
    const port = (tcp.address() as import('node:net').AddressInfo).port;
    const reads: [string, string][] = [
      ['home', home],
      ['home secret', homeSecret],
      ['npmrc', join(home, '.npmrc')],
      ['project config', join(repoRoot, 'config')],
      ['host config', join(hostDir, 'config.toml')],
      ['host environ', `/proc/${process.pid}/environ`],
      ['shadow', '/etc/shadow'],
      ['global npmrc', '/usr/local/etc/npmrc'],
      ['ssl private keys', '/etc/ssl/private'],
    ];
    const code = [
      'import os, socket',
      'def read(label, path):',
      '    try:',
      '        print(f"{label}: {os.listdir(path) if os.path.isdir(path) else open(path).read()}")',
      '    except OSError as e:',
      '        print(f"{label}: {e.strerror}")',
      ...reads.map(([label, path]) => `read(${JSON.stringify(label)}, ${JSON.stringify(path)})`),
      'def connect(label, family, address):',
      '    try:',
      '        s = socket.socket(family, socket.SOCK_STREAM)',
      '        s.settimeout(2)',
      '        s.connect(address)',
      '        print(f"{label}: {s.recv(100).decode()}")',
      '    except OSError as e:',
      '        print(f"{label}: {e.strerror}")',
      `connect("unix socket", socket.AF_UNIX, ${JSON.stringify(socketPath)})`,
      `connect("abstract socket", socket.AF_UNIX, "\\0" + ${JSON.stringify(abstract.slice(1))})`,
      `connect("loopback", socket.AF_INET, ("127.0.0.1", ${port}))`,
      'print(f"init: {open(\'/proc/1/cmdline\').read().split(chr(0))[0]}")',
      'open("result.txt", "w").write(str(sum(i * i for i in range(1000))))',
      'print(f"computed: {open(\'result.txt\').read()}")',
    ].join('\n');
    try {
      const result = await call({ workspace, sandbox: 'bwrap' }, { code });
      expect(result.output).not.toContain(secret);
      const seen = answers(result.output);
      for (const [label] of reads) expect(seen[label], label).toBe('No such file or directory');
      expect(seen['unix socket']).toBe('No such file or directory');
      expect(seen['abstract socket']).toBe('Connection refused');
      expect(seen.loopback).toMatch(/^(Connection refused|Network is unreachable)$/);
      expect(seen.init).toBe('bwrap');
      expect(seen.computed).toBe('332833500');
      expect(await readFile(join(workspace, 'result.txt'), 'utf8')).toBe('332833500');
    } finally {
      await rm(homeSecret, { force: true });
      await rm(hostDir, { recursive: true, force: true });
    }
  });

  it('cannot regain capabilities or make a setuid program in the workspace', async () => {
    const code = [
      'import os, shutil',
      "print(f\"capabilities: {[l.split()[1] for l in open('/proc/self/status') if l.startswith('CapEff')][0]}\")",
      'shutil.copy("/usr/bin/true", "planted")',
      'try:',
      '    os.chmod("planted", 0o4755)',
      '    print("chmod: done")',
      'except OSError as e:',
      '    print(f"chmod: {e.strerror}")',
    ].join('\n');
    const result = await call({ workspace, sandbox: 'bwrap' }, { code });
    const seen = answers(result.output);
    expect(seen.capabilities, result.output).toBe('0000000000000000');
    expect(seen.chmod).toBe('Operation not permitted');
    expect((await stat(join(workspace, 'planted'))).mode & 0o6000).toBe(0);
  });
});

// A pyenv or venv interpreter lives outside the system directories (often in a home directory).
const hostPython = (() => {
  try {
    return execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
})();
const outsideSystem = hostPython !== '' && !/^\/(usr|bin|sbin|lib\w*)\//.test(hostPython);

describe.skipIf(!bwrapWorks || !outsideSystem)('an interpreter named by path under bubblewrap', () => {
  it('has its own installation mounted read-only, and nothing else of where it lives', async () => {
    const code = [
      'import os, sys',
      'print(f"version: {sys.version_info[0]}")',
      'print(f"beside it: {os.listdir(os.path.dirname(sys.prefix))}")',
      'try:',
      '    open(os.path.join(sys.prefix, "planted"), "w")',
      '    print("write: done")',
      'except OSError as e:',
      '    print(f"write: {e.strerror}")',
    ].join('\n');
    const result = await call({ workspace, sandbox: 'bwrap', python: hostPython }, { code });
    const seen = answers(result.output);
    expect(seen.version, result.output).toBe('3');
    const prefix = execFileSync(hostPython, ['-c', 'import sys; print(sys.prefix)'], { encoding: 'utf8' }).trim();
    expect(seen['beside it']).toBe(`['${prefix.split('/').at(-1)}']`);
    expect(seen.write).toBe('Read-only file system');
  });
});

describe.skipIf(!isRoot)('what the code sees as a separate uid (no bubblewrap, host is root)', () => {
  it("not root's home, not a private config file; world-readable files stay readable (documented)", async () => {
    const secret = `secret-${randomUUID()}`;
    const hostDir = await mkdtemp('/var/tmp/openmanus-host-');
    await chmod(hostDir, 0o755);
    await writeFile(join(hostDir, 'config.toml'), secret, { mode: 0o600 });
    await writeFile(join(hostDir, 'public.txt'), 'public', { mode: 0o644 });
    const home = homedir();
    const homeIsPrivate = ((await stat(home)).mode & 0o007) === 0;
    const code = [
      'import os',
      'def read(label, path):',
      '    try:',
      '        print(f"{label}: {os.listdir(path) if os.path.isdir(path) else open(path).read()}")',
      '    except OSError as e:',
      '        print(f"{label}: {e.strerror}")',
      `read("home", ${JSON.stringify(home)})`,
      `read("private config", ${JSON.stringify(join(hostDir, 'config.toml'))})`,
      `read("public file", ${JSON.stringify(join(hostDir, 'public.txt'))})`,
      'read("shadow", "/etc/shadow")',
      'print(f"uid: {os.getuid()} {os.getgid()} {os.getgroups()}")',
    ].join('\n');
    try {
      const result = await call({ workspace, sandbox: 'none' }, { code });
      expect(result.output).not.toContain(secret);
      const seen = answers(result.output);
      if (homeIsPrivate) expect(seen.home).toBe('Permission denied');
      expect(seen['private config']).toBe('Permission denied');
      expect(seen.shadow).toBe('Permission denied');
      expect(seen['public file']).toBe('public');
      const [uid, gid, groups] = (seen.uid ?? '').split(' ');
      expect(Number(uid)).toBeGreaterThan(65535);
      expect(gid).toBe(uid);
      expect(groups).toBe('[]');
    } finally {
      await rm(hostDir, { recursive: true, force: true });
    }
  });

  it("files left to a per-call uid by a host that died mid-call are usable again, and the host's after", async () => {
    const dir = await tempWorkspace();
    const { chown } = await import('node:fs/promises');
    await writeFile(join(dir, 'left.txt'), 'left');
    await chown(join(dir, 'left.txt'), 1_800_999_999, 1_800_999_999);
    const result = await call({ workspace: dir, sandbox: 'none' }, { code: 'open("left.txt", "a").write("+more")' });
    expect(result.isError, result.output).toBe(false);
    expect(await readFile(join(dir, 'left.txt'), 'utf8')).toBe('left+more');
    expect(lstatSync(join(dir, 'left.txt')).uid).toBe(0);
    await rm(dir, { recursive: true, force: true });
  });

  it('calls on one workspace take turns, and one cancelled while it waits never runs', async () => {
    const dir = await tempWorkspace();
    const controller = new AbortController();
    const first = call({ workspace: dir, sandbox: 'none' }, { code: 'import time\ntime.sleep(1)\nprint("first")' });
    const second = call(
      { workspace: dir, sandbox: 'none' },
      { code: 'open("second-ran.txt", "w")\nprint("second")' },
      controller.signal,
    );
    controller.abort();
    expect(await first).toEqual({ output: 'first', isError: false });
    expect((await second).isError).toBe(true);
    // A third call takes its turn after the second's: had the second been left to run, it ran by then.
    expect(await call({ workspace: dir, sandbox: 'none' }, { code: 'print("third")' })).toEqual({
      output: 'third',
      isError: false,
    });
    expect(existsSync(join(dir, 'second-ran.txt'))).toBe(false);
    await rm(dir, { recursive: true, force: true });
  });

  it("can change the host's files during the call; everything is the host's again afterwards", async () => {
    const dir = await tempWorkspace();
    await mkdir(join(dir, 'made-by-host'));
    await writeFile(join(dir, 'made-by-host', 'data.txt'), 'host', { mode: 0o644 });
    const code = [
      'import os, shutil',
      'open("made-by-host/data.txt", "a").write("+code")',
      'open("made-by-host/new.txt", "w").write("new")',
      'os.makedirs("deep/er")',
      'open("deep/er/file.txt", "w").write("deep")',
      'os.chmod("made-by-host/data.txt", 0o600)',
      'shutil.copy("/usr/bin/true", "planted")',
      'os.chmod("planted", 0o6755)',
      'os.symlink("/etc/shadow", "link")',
      'print("done")',
    ].join('\n');
    const result = await call({ workspace: dir, sandbox: 'none' }, { code });
    expect(result).toEqual({ output: 'done', isError: false });
    expect(await readFile(join(dir, 'made-by-host', 'data.txt'), 'utf8')).toBe('host+code');
    for (const path of [
      '',
      'made-by-host',
      'made-by-host/data.txt',
      'made-by-host/new.txt',
      'deep/er/file.txt',
      'link',
    ])
      expect(lstatSync(join(dir, path)).uid, path).toBe(0);
    expect((await stat(join(dir, 'planted'))).mode & 0o6000).toBe(0);
    expect(lstatSync('/etc/shadow').uid).toBe(0);
    await rm(dir, { recursive: true, force: true });
  });
});

describe('processes the code detaches', () => {
  const markers: string[] = [];
  afterEach(() => {
    // A failing run must not leave sleepers behind.
    for (const marker of markers.splice(0)) for (const pid of processesMatching(marker)) process.kill(pid, 'SIGKILL');
  });

  /** Double fork and setsid: the grandchild leaves the process group and session; it says when it runs. */
  const detach = (marker: string, then: string) =>
    [
      'import os, sys, time',
      'pid = os.fork()',
      'if pid == 0:',
      '    os.setsid()',
      '    if os.fork() == 0:',
      `        os.execvp("python3", ["python3", "-c", "import sys, time; open(sys.argv[1], 'w').close(); time.sleep(300)", "started-${marker}", "${marker}"])`,
      '    os._exit(0)',
      'os.waitpid(pid, 0)',
      `while not os.path.exists("started-${marker}"): time.sleep(0.01)`,
      'print("detached", flush=True)',
      then,
    ].join('\n');

  const modes: { name: string; sandbox: Sandbox; runs: boolean }[] = [
    { name: 'bubblewrap', sandbox: 'bwrap', runs: bwrapWorks },
    { name: 'a separate uid', sandbox: 'none', runs: isRoot },
    { name: 'the default', sandbox: 'auto', runs: true },
    { name: 'the local sandbox provider with bubblewrap', sandbox: 'provider:bwrap', runs: bwrapWorks },
    { name: 'the local sandbox provider with a separate uid', sandbox: 'provider:none', runs: isRoot },
  ];

  describe.each(modes)('under $name', ({ sandbox, runs }) => {
    it.skipIf(!runs)('are gone when the code exits', async () => {
      const marker = `detached-exit-${randomUUID()}`;
      markers.push(marker);
      const result = await call({ workspace, sandbox }, { code: detach(marker, 'pass') });
      expect(result).toEqual({ output: 'detached', isError: false });
      expect(processesMatching(marker)).toEqual([]);
      expect(existsSync(join(workspace, `started-${marker}`))).toBe(true);
    });

    it.skipIf(!runs)('are gone when the call times out', async () => {
      const marker = `detached-timeout-${randomUUID()}`;
      markers.push(marker);
      const result = await call({ workspace, sandbox }, { code: detach(marker, 'time.sleep(60)'), timeout: 3 });
      expect(result.output).toMatch(/timed out after 3 seconds/);
      expect(processesMatching(marker)).toEqual([]);
    });

    it.skipIf(!runs)('are gone when the call is cancelled', async () => {
      const marker = `detached-cancel-${randomUUID()}`;
      markers.push(marker);
      const controller = new AbortController();
      const started = join(workspace, `started-${marker}`);
      const poll = setInterval(() => existsSync(started) && controller.abort(), 20);
      try {
        const result = await call(
          { workspace, sandbox },
          { code: detach(marker, 'time.sleep(60)'), timeout: 15 },
          controller.signal,
        );
        expect(result.output).toMatch(/cancelled/);
      } finally {
        clearInterval(poll);
      }
      expect(existsSync(started)).toBe(true);
      expect(processesMatching(marker)).toEqual([]);
    });
  });

  it("as the same user (no root, no bubblewrap), processes still carrying the call's marker are reaped", async () => {
    const { reapMarked } = await import('../../src/sandbox/reaping.js');
    const marker = `detached-same-user-${randomUUID()}`;
    markers.push(marker);
    const token = randomUUID();
    const child = spawn('python3', ['-u', '-'], {
      cwd: workspace,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', OPENMANUS_PYTHON_CALL: token },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    child.stdin.end(detach(marker, 'pass'));
    await new Promise((resolve) => child.on('exit', resolve));
    expect(processesMatching(marker)).not.toEqual([]);
    await reapMarked('OPENMANUS_PYTHON_CALL', token);
    expect(processesMatching(marker)).toEqual([]);
  });
});

describe('the scan for marked processes', () => {
  it('lets the event loop run while it reads every process (thousands of processes must not stall the host)', async () => {
    const { reapMarked } = await import('../../src/sandbox/reaping.js');
    let turns = 0;
    let counting = true;
    const count = () => {
      turns++;
      if (counting) setImmediate(count);
    };
    setImmediate(count);
    await reapMarked('OPENMANUS_PYTHON_CALL', randomUUID());
    counting = false;
    expect(turns).toBeGreaterThan(1);
  });
});

describe('the sandbox by default', () => {
  it.skipIf(!bwrapWorks)('is bubblewrap where it works', async () => {
    const result = await call({ workspace }, { code: 'print(open("/proc/1/cmdline").read().split(chr(0))[0])' });
    expect(result).toEqual({ output: 'bwrap', isError: false });
  });

  /** A fresh copy of the library, so its once-per-process memory starts empty. */
  const freshLibrary = async () => {
    vi.resetModules();
    return (await import('../../src/index.js')) as typeof import('../../src/index.js');
  };
  const systemPython = ['/usr/bin/python3', '/usr/local/bin/python3'].find(existsSync) ?? 'python3';

  /** Calls with bubblewrap out of reach (PATH without it) while the sandbox is first probed. */
  const withoutBwrap = async (run: () => Promise<unknown>) => {
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      await run();
    } finally {
      process.env.PATH = path;
    }
  };

  it('says once per process, and clearly, when bubblewrap is not available', async () => {
    const library = await freshLibrary();
    const notices: string[] = [];
    const onNotice = (message: string) => notices.push(message);
    const first = library.createPythonExecute({ workspace, python: systemPython, onNotice });
    const second = library.createPythonExecute({ workspace, python: systemPython, onNotice });
    await withoutBwrap(() => toolSession(first).call({ code: 'print(1)' }));
    const again = await toolSession(first).call({ code: 'print(2)' });
    await toolSession(second).call({ code: 'print(3)' });
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatch(/^python_execute: the bubblewrap sandbox is not available \(bwrap is not installed\)\./);
    expect(notices[0]).toMatch(/Install bubblewrap/);
    if (isRoot) {
      expect(notices[0]).toMatch(/separate unprivileged user/);
      expect(again).toEqual({ output: '2', isError: false });
    }
  });

  it('goes to process warnings when no one listens, still once', async () => {
    const library = await freshLibrary();
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      const tool = library.createPythonExecute({ workspace, python: systemPython });
      await withoutBwrap(() => toolSession(tool).call({ code: 'print(1)' }));
      await toolSession(tool).call({ code: 'print(1)' });
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]?.[0])).toMatch(/bubblewrap sandbox is not available/);
    } finally {
      warn.mockRestore();
    }
  });

  it('says nothing when no sandbox was asked for', async () => {
    const library = await freshLibrary();
    const notices: string[] = [];
    const tool = library.createPythonExecute({
      workspace,
      python: systemPython,
      sandbox: 'none',
      onNotice: (m: string) => notices.push(m),
    });
    await withoutBwrap(() => toolSession(tool).call({ code: 'print(1)' }));
    expect(notices).toEqual([]);
  });
});

describe('code of any size and content', () => {
  const modes: Sandbox[] = ['auto', 'none'];
  it.each(modes)('3 MB of code runs (sandbox %s)', async (sandbox) => {
    const code = `data = "${'x'.repeat(3_000_000)}"\nprint(len(data))`;
    const result = await call({ workspace, sandbox }, { code, timeout: 20 });
    expect(result).toEqual({ output: '3000000', isError: false });
  });

  it('code with a NUL byte is refused with a plain message, and nothing runs', async () => {
    const result = await call({ workspace }, { code: 'open("nul-ran.txt", "w")\nprint("a\0b")' });
    expect(result).toEqual({
      output:
        "Error: The code contains a NUL character (at line 2, column 9); Python source cannot contain NUL bytes, so nothing was run. Write it as '\\x00' inside a string instead.",
      isError: true,
    });
    expect(existsSync(join(workspace, 'nul-ran.txt'))).toBe(false);
  });
});
