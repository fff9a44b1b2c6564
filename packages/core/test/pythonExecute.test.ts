import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { processesMatching } from '../src/testing/processes.js';
import { toolSession } from '../src/testing/toolSession.js';
import { createPythonExecute } from '../src/tools/pythonExecute.js';
import { eventually } from './eventually.js';
import { tempWorkspace } from './toolHelpers.js';

const callTool = (tool: Parameters<typeof toolSession>[0], args: unknown, signal?: AbortSignal) =>
  toolSession(tool).call(args, signal ? { signal } : {});

let workspace: string;
beforeAll(async () => {
  workspace = await tempWorkspace();
});

describe('the test kit', () => {
  it('processesMatching sees a live process (so an empty answer means something)', async () => {
    const { spawn } = await import('node:child_process');
    const marker = `alive-${Date.now()}`;
    // Not through a pyenv shim: its helper processes carry the arguments for a moment too.
    const python3 = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
    const child = spawn(python3, ['-c', 'import time; time.sleep(600)', marker]);
    // Its arguments show in /proc once it has exec'd python.
    await eventually(() => processesMatching(marker).length > 0, 'the python process');
    expect(processesMatching(marker)).toEqual([child.pid]);
    child.kill('SIGKILL');
  });
});

// The default (bubblewrap where it works) and no bubblewrap (a separate uid when run as root).
describe.each([
  { mode: 'the default sandbox', sandbox: undefined },
  { mode: "sandbox 'none'", sandbox: 'none' as const },
])('python_execute with $mode', ({ sandbox }) => {
  let python: ReturnType<typeof createPythonExecute>;
  beforeAll(() => {
    python = createPythonExecute({ workspace, maxTimeoutSec: 10, ...(sandbox ? { sandbox } : {}) });
  });

  it('runs code in a python3 process in the workspace and returns stdout', async () => {
    const result = await callTool(python, {
      code: 'import os, sys\nprint(sys.version_info[0], os.getcwd())\nopen("out.txt","w").write("hi")',
    });
    expect(result).toEqual({ output: `3 ${workspace}`, isError: false });
    expect(await readFile(join(workspace, 'out.txt'), 'utf8')).toBe('hi');
  });

  it('returns the traceback and a failure flag when the code raises', async () => {
    const result = await callTool(python, { code: 'print("before")\n1/0' });
    expect(result.isError).toBe(true);
    expect(result.output).toMatch(
      /^Error: before\n\[stderr\]\nTraceback[\s\S]*ZeroDivisionError: division by zero\n\[exit code 1\]$/,
    );
  });

  it('keeps no state between calls and leaks no host secrets', async () => {
    process.env.OPENAI_API_KEY_FOR_TEST = 'sk-secret';
    await callTool(python, { code: 'x = 41' });
    const result = await callTool(python, {
      code: 'import os\nprint("x" in globals(), "sk-secret" in str(os.environ))',
    });
    delete process.env.OPENAI_API_KEY_FOR_TEST;
    expect(result.output).toBe('False False');
  });

  it('kills an infinite loop at the timeout the model asked for', async () => {
    // The loop never ends by itself: without the kill, the test's own time-out would fail it.
    const result = await callTool(python, { code: 'print("spinning", flush=True)\nwhile True: pass', timeout: 1 });
    expect(result.isError).toBe(true);
    expect(result.output).toContain('spinning');
    expect(result.output).toContain('Execution timed out after 1 seconds; the process and its children were killed.');
  });

  it('kills forked children too, leaving no orphan behind', async () => {
    const marker = `orphan-${Date.now()}`;
    const code = `import os, time\nif os.fork() == 0:\n    os.execvp("python3", ["python3", "-c", "import time; time.sleep(600)", "${marker}"])\nprint("parent done")`;
    const result = await callTool(python, { code });
    expect(result.output).toBe('parent done');
    // The child sleeps 10 minutes: only the kill ends it within the wait.
    await eventually(() => processesMatching(marker).length === 0, 'the forked child to be killed');
  });

  it('caps a flood of output without holding it all', async () => {
    const result = await callTool(python, { code: 'import sys\nsys.stdout.write("x" * 50_000_000)' });
    expect(result.output.length).toBeLessThan(21_000);
    expect(result.output).toMatch(/…\[output truncated: 49980000 more characters\]$/);
  });

  it('reports a crashed interpreter', async () => {
    const result = await callTool(python, { code: 'import os\nos.abort()' });
    expect(result.isError).toBe(true);
    expect(result.output).toMatch(/\[exit code none: killed by SIGABRT\]$/);
  });

  it('refuses a timeout above the cap with a validation error', async () => {
    const result = await callTool(python, { code: 'print(1)', timeout: 999 });
    expect(result.isError).toBe(true);
    expect(result.output).toMatch(/^Error: invalid arguments for python_execute:[\s\S]*timeout/);
  });

  it('stops at once when the run is cancelled', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const result = await callTool(python, { code: 'import time\ntime.sleep(30)', timeout: 10 }, controller.signal);
    // Cancelled, not ended by its own 10 s timeout (which a slow stop would reach first).
    expect(result.isError).toBe(true);
    expect(result.output).toContain('was cancelled');
    expect(result.output).not.toContain('timed out');
  });
});

const hasBwrap = (() => {
  try {
    execFileSync('bwrap', ['--version']);
    return true;
  } catch {
    return false;
  }
})();

describe('python_execute under bubblewrap', () => {
  it('writes only to the workspace and cannot reach the host network', async () => {
    const { createServer } = await import('node:net');
    const server = createServer((socket) => socket.end('hello from the host'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as import('node:net').AddressInfo;
    // Outside the workspace and outside /tmp (which the sandbox replaces with its own).
    const outside = await mkdtemp('/var/tmp/openmanus-outside-');
    const root = process.getuid?.() === 0;
    const code = [
      'import socket',
      'open("inside.txt", "w").write("ok")',
      'try:',
      `    open("${outside}/file.txt", "w")`,
      '    print("outside: written")',
      'except OSError as e:',
      '    print("outside:", e.strerror)',
      'try:',
      `    print("network:", socket.create_connection(("127.0.0.1", ${port}), timeout=2).recv(100).decode())`,
      'except OSError as e:',
      '    print("network:", e.strerror)',
    ].join('\n');
    try {
      // Without bubblewrap: the network is reachable; as root, the code runs as another uid and
      // cannot write our private directory.
      const plain = await callTool(createPythonExecute({ workspace, sandbox: 'none' }), { code });
      expect(plain.output).toBe(`outside: ${root ? 'Permission denied' : 'written'}\nnetwork: hello from the host`);
      await rm(join(workspace, 'inside.txt'));
      const sandboxed = await callTool(createPythonExecute({ workspace, sandbox: 'bwrap' }), { code });
      if (hasBwrap) {
        // The host's /var/tmp is not there at all (the sandbox's own is empty and read-only).
        expect(sandboxed.output).toBe('outside: No such file or directory\nnetwork: Connection refused');
        expect(await readFile(join(workspace, 'inside.txt'), 'utf8')).toBe('ok');
      } else {
        // Hosts without bubblewrap (CI installs it) get a clear refusal, never an unsandboxed run.
        expect(sandboxed.output).toMatch(/could not start bwrap: it is not installed/);
        expect(existsSync(join(workspace, 'inside.txt'))).toBe(false);
      }
    } finally {
      server.close();
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('says clearly when the sandbox program is missing', async () => {
    const broken = createPythonExecute({ workspace, python: 'python3', sandbox: 'bwrap' });
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      const result = await callTool(broken, { code: 'print(1)' });
      expect(result.output).toMatch(/could not start bwrap: it is not installed \(not found on PATH\)/);
    } finally {
      process.env.PATH = path;
    }
  });
});
