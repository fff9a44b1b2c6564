// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings with ${...} in them are bash, not JavaScript.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  createAgent,
  createLocalSandboxProvider,
  createOpenAiLlm,
  defaultPolicies,
  err,
  ok,
  run,
  terminate,
} from '@openmanus/core';
import {
  processesMatching,
  scriptedLlm,
  startOpenAiServer,
  type ToolSession,
  toolSession,
} from '@openmanus/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type BashOptions, createBash } from '../src/bash/bashTool.js';
import { directRun, eventually, tempWorkspace } from './helpers.js';

const bwrapWorks = (() => {
  try {
    execFileSync('bwrap', ['--unshare-all', '--die-with-parent', '--ro-bind', '/', '/', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** A `sleep` no other process runs: its command line finds exactly the processes a test started. */
const nap = (seconds = 40) => `sleep ${seconds}.${Math.floor(Math.random() * 1e8) + 1e8}`;

let workspace: string;
let sessions: ToolSession[];
beforeEach(async () => {
  workspace = await tempWorkspace();
  sessions = [];
});
afterEach(async () => {
  await Promise.all(sessions.map((s) => s.close()));
});

/** A run's bash: calls share one shell until `close` (the end of the run). */
const shell = (options: BashOptions = {}) => {
  const session = toolSession(createBash({ workspace, ...options }));
  sessions.push(session);
  return session;
};

describe('bash: one persistent shell per run', () => {
  it('starts in the workspace and keeps cd, variables, arrays and functions between calls', async () => {
    const sh = shell();
    expect(await sh.call({ command: 'pwd' })).toEqual({ output: `${workspace}\n[exit code 0]`, isError: false });
    await sh.call({ command: 'mkdir -p src/lib && cd src' });
    await sh.call({ command: 'export GREETING=hello; count=3; declare -a langs=(ts py); shout() { echo "$1!"; }' });
    const result = await sh.call({ command: 'pwd; echo "$GREETING $count ${langs[1]}"; shout hey; echo "args: $#"' });
    expect(result).toEqual({ output: `${workspace}/src\nhello 3 py\nhey!\nargs: 0\n[exit code 0]`, isError: false });
  });

  it('reports the exit code, and both stdout and stderr (stdout is not hidden by stderr)', async () => {
    const sh = shell();
    const result = await sh.call({ command: 'echo made it; echo "warning: careful" >&2; ls /nonexistent; false' });
    expect(result.isError).toBe(false);
    expect(result.output).toBe(
      "made it\n[stderr]\nwarning: careful\nls: cannot access '/nonexistent': No such file or directory\n[exit code 1]",
    );
    expect((await sh.call({ command: '(exit 7)' })).output).toBe('[exit code 7]');
    expect((await sh.call({ command: 'printf "no newline"' })).output).toBe('no newline\n[exit code 0]');
  });

  it('keeps a syntax error inside its command: the shell and its state carry on', async () => {
    const sh = shell();
    await sh.call({ command: 'kept=yes' });
    const broken = await sh.call({ command: 'echo "unterminated' });
    expect(broken.output).toMatch(/^\[stderr\]\n.*unexpected EOF while looking for matching `"'\n\[exit code 2\]$/);
    expect((await sh.call({ command: 'echo $kept' })).output).toBe('yes\n[exit code 0]');
  });

  it('gives commands no input, so a program waiting for it cannot swallow the next command', async () => {
    const sh = shell();
    expect((await sh.call({ command: 'read line; echo "read: $? [$line]"; cat' })).output).toBe(
      'read: 1 []\n[exit code 0]',
    );
    expect((await sh.call({ command: 'echo next' })).output).toBe('next\n[exit code 0]');
  });

  it('caps long output, keeping its start and end, and says how much was cut', async () => {
    const sh = shell({ maxOutputChars: 100 });
    const result = await sh.call({ command: 'seq 1 10000; seq 1 3000 >&2' });
    const full = Array.from({ length: 10000 }, (_, i) => `${i + 1}\n`).join('');
    const cut = full.length - 100;
    expect(result.output).toMatch(
      new RegExp(`^1\\n2\\n3\\n[\\s\\S]*\\n…\\[${cut} characters of stdout cut here\\]…\\n`),
    );
    expect(result.output).toMatch(
      /\n9999\n10000\n\[stderr\]\n1\n2\n[\s\S]*stderr cut here[\s\S]*\n3000\n\[exit code 0\]$/,
    );
    expect(result.output.length).toBeLessThan(400);
  });

  it('refuses an empty command clearly, and a command with a NUL character', async () => {
    const sh = shell();
    for (const command of ['', '   \n']) {
      expect(await sh.call({ command })).toEqual({
        output:
          'Error: No command given: pass the bash command to run in `command` (or `restart: true` for a fresh shell).',
        isError: true,
      });
    }
    expect((await sh.call({ command: 'echo a\0b' })).output).toMatch(/NUL character.*nothing was run/);
    expect((await sh.call({})).output).toMatch(/^Error: invalid arguments for bash:[\s\S]*command/);
  });

  it('does not let output written between calls into the next call', async () => {
    const sh = shell();
    const first = await sh.call({ command: '(sleep 0.2; echo late; echo "late too" >&2; touch written) & echo now' });
    expect(first.output).toBe('now\n[exit code 0]');
    await eventually(() => existsSync(join(workspace, 'written')));
    expect((await sh.call({ command: 'echo clean' })).output).toBe('clean\n[exit code 0]');
  });

  it('shows the model its timeout: default 120 seconds, a maximum, and the OpenManus parameter names', () => {
    const { spec } = createBash({ maxTimeoutSec: 300 });
    expect(spec.name).toBe('bash');
    expect(spec.description).toMatch(/default 120/);
    expect(spec.parameters).toMatchObject({
      required: ['command'],
      properties: {
        command: { type: 'string' },
        restart: { type: 'boolean' },
        timeout: { type: 'number', maximum: 300 },
      },
    });
  });
});

const modes = [
  { sandbox: 'none' as const, via: 'the tool', runs: true },
  { sandbox: 'bwrap' as const, via: 'the tool', runs: bwrapWorks },
  { sandbox: 'none' as const, via: 'the local sandbox provider', runs: true },
  { sandbox: 'bwrap' as const, via: 'the local sandbox provider', runs: bwrapWorks },
];

describe.each(modes)('bash processes (sandbox $sandbox, by $via)', ({ sandbox, via, runs }) => {
  /** The isolation, by the tool itself or by the local provider's sandbox it runs in. */
  const isolated = (): BashOptions =>
    via === 'the tool'
      ? { sandbox }
      : { sandboxProvider: createLocalSandboxProvider({ isolation: sandbox, workspace }) };

  it.runIf(runs)('after a timeout: everything the command started is killed and a fresh shell works', async () => {
    const sh = shell(isolated());
    await sh.call({ command: 'mkdir -p sub && cd sub && marker=set' });
    const sleeper = nap();
    const started = Date.now();
    const result = await sh.call({ command: `echo before; ${sleeper} & ${sleeper}`, timeout: 0.5 });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(result.isError).toBe(true);
    expect(result.output).toMatch(
      /^Error: The command timed out after 0.5 seconds and was killed, with every process it started\. The shell was restarted: a new one in the workspace is ready \(the working directory, variables and functions were reset\)\.\nbefore$/,
    );
    expect(processesMatching(sleeper)).toEqual([]);
    expect((await sh.call({ command: 'echo "${marker:-unset}"; pwd' })).output).toBe(
      `unset\n${workspace}\n[exit code 0]`,
    );
  });

  it.runIf(runs)('an interrupt stops the foreground command and the rest of its line; the shell lives on', async () => {
    const direct = directRun(createBash({ workspace, ...isolated() }), workspace);
    try {
      await direct.call({ command: 'cd /tmp 2>/dev/null; cd - >/dev/null; kept=yes; mkdir -p d && cd d' });
      const sleeper = nap();
      const background = nap();
      await direct.call({ command: `${background} > /dev/null 2>&1 &` });
      await eventually(() => processesMatching(background).length > 0);
      const controller = new AbortController();
      const call = direct.call({ command: `echo started; ${sleeper}; echo after` }, controller.signal);
      await eventually(() => processesMatching(sleeper).length > 0);
      controller.abort();
      expect(await call).toEqual(
        err(
          'The command was interrupted (SIGINT) before it finished; the shell is still running, with its working directory and variables.\nstarted',
        ),
      );
      expect(processesMatching(sleeper)).toEqual([]);
      // A background job of an earlier command is not the command that was interrupted.
      expect(processesMatching(background)).not.toEqual([]);
      expect(await direct.call({ command: 'echo $kept; pwd' })).toEqual(ok(`yes\n${workspace}/d\n[exit code 0]`));
    } finally {
      await direct.close();
    }
  });

  it.runIf(runs)('an interrupt stops a loop in the shell itself, and a program that ignores SIGINT', async () => {
    const direct = directRun(createBash({ workspace, ...isolated() }), workspace);
    try {
      const background = nap();
      await direct.call({ command: `kept=yes; ${background} > /dev/null 2>&1 &` });
      await eventually(() => processesMatching(background).length > 0);
      const loop = new AbortController();
      const spinning = direct.call({ command: 'touch spinning; while :; do :; done; echo after' }, loop.signal);
      await eventually(() => existsSync(join(workspace, 'spinning')));
      loop.abort();
      expect(await spinning).toMatchObject(err(expect.stringMatching(/shell is still running/)));

      const stubborn = `import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); open("deaf", "w").close(); time.sleep(40.${Date.now()})`;
      const controller = new AbortController();
      const call = direct.call({ command: `python3 -c '${stubborn}'; echo after` }, controller.signal);
      await eventually(() => existsSync(join(workspace, 'deaf')));
      const started = Date.now();
      controller.abort();
      const result = await call;
      // SIGINT is ignored: SIGKILL follows after a grace of about a second.
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
      expect(Date.now() - started).toBeLessThan(3000);
      expect(result).toMatchObject(err(expect.stringMatching(/interrupted.*shell is still running/)));
      expect(JSON.stringify(result)).not.toMatch(/after/);
      expect(processesMatching(stubborn)).toEqual([]);
      // SIGKILL went to what the interrupted command started, not to earlier background jobs.
      expect(processesMatching(background)).not.toEqual([]);
      expect(await direct.call({ command: 'echo $kept' })).toEqual(ok('yes\n[exit code 0]'));
    } finally {
      await direct.close();
    }
  });

  it.runIf(runs)('`exit` ends the shell: the call says so and the next call gets a fresh shell', async () => {
    const sh = shell(isolated());
    await sh.call({ command: 'cd / 2>/dev/null; marker=set' });
    const exited = await sh.call({ command: 'echo bye; exit 3' });
    expect(exited).toEqual({
      output:
        'bye\n[The shell itself exited (exit code 3) during this command. The next command starts a new shell in the workspace: the working directory, variables and functions were reset.]',
      isError: false,
    });
    expect((await sh.call({ command: 'echo "${marker:-unset}"; pwd' })).output).toBe(
      `unset\n${workspace}\n[exit code 0]`,
    );
  });

  it.runIf(runs)('a shell killed between calls is replaced, and the next call says so', async () => {
    const sh = shell(isolated());
    // A process of its own (its command line names it) that kills the shell, then ends.
    const sleeper = nap(0);
    const home = (await sh.call({ command: 'echo "$HOME"' })).output.split('\n')[0] ?? '';
    await sh.call({ command: `bash -c '${sleeper}; kill -9 '$$ > /dev/null 2>&1 &` });
    await eventually(() => processesMatching(sleeper).length > 0);
    await eventually(() => processesMatching(sleeper).length === 0);
    const result = await sh.call({ command: 'echo fresh' });
    // Under bubblewrap the sandbox reports its shell's death as an exit status.
    expect(result.output).toMatch(/^\[The shell had ended \((killed by SIGKILL|exit code 137)\)/);
    expect(result.output).toMatch(/ran in a new shell in the workspace[\s\S]*\nfresh\n\[exit code 0\]$/);
    // What the dead shell left is cleaned up: its private home (unsandboxed; bubblewrap's is its own /tmp).
    expect(existsSync(home)).toBe(sandbox === 'bwrap');
  });

  it.runIf(runs)('`restart` kills the shell and what it runs, and starts a fresh one', async () => {
    const sh = shell(isolated());
    const sleeper = nap();
    await sh.call({ command: `marker=set; mkdir -p d; cd d; ${sleeper} > /dev/null 2>&1 &` });
    await eventually(() => processesMatching(sleeper).length > 0);
    const result = await sh.call({ command: 'echo "${marker:-unset}"; pwd', restart: true });
    expect(result.output).toBe(
      `The shell was restarted: a fresh one in the workspace (the working directory, variables and functions were reset).\nunset\n${workspace}\n[exit code 0]`,
    );
    expect(processesMatching(sleeper)).toEqual([]);
    expect(await sh.call({ command: '', restart: true })).toEqual({
      output:
        'The shell was restarted: a fresh one in the workspace (the working directory, variables and functions were reset).',
      isError: false,
    });
  });

  it.runIf(runs)('a command that removed the workspace itself: the next shell gets it back', async () => {
    const sh = shell(isolated());
    // Under bubblewrap the workspace is a mount point: only what is in it goes.
    await sh.call({ command: 'rm -rf "$PWD" 2>/dev/null; true' });
    expect((await sh.call({ command: 'pwd', restart: true })).output).toBe(
      `The shell was restarted: a fresh one in the workspace (the working directory, variables and functions were reset).\n${workspace}\n[exit code 0]`,
    );
  });

  it.runIf(runs)('two runs get two shells, each gone with everything it started when its run ends', async () => {
    const first = shell(isolated());
    const second = shell(isolated());
    const [sleepFirst, sleepSecond] = [nap(), nap()];
    await first.call({ command: `owner=first; ${sleepFirst} > /dev/null 2>&1 &` });
    await second.call({ command: `${sleepSecond} > /dev/null 2>&1 & setsid ${sleepSecond} > /dev/null 2>&1 &` });
    expect((await second.call({ command: 'echo "${owner:-unset}"' })).output).toBe('unset\n[exit code 0]');
    await eventually(() => processesMatching(sleepFirst).length === 1 && processesMatching(sleepSecond).length === 2);
    await first.close();
    expect(processesMatching(sleepFirst)).toEqual([]);
    expect(processesMatching(sleepSecond)).toHaveLength(2);
    expect((await second.call({ command: 'echo still here' })).output).toBe('still here\n[exit code 0]');
    await second.close();
    // setsid left the shell's process group: found all the same.
    expect(processesMatching(sleepSecond)).toEqual([]);
  });
});

describe('bash in an agent', () => {
  it('cd in one call, pwd in the next: the model sees one shell, gone when the run ends', async () => {
    await mkdir(join(workspace, 'project'));
    const sleeper = nap();
    const server = await startOpenAiServer({
      script: [
        { toolCalls: [{ name: 'bash', arguments: { command: `cd project; ${sleeper} > /dev/null 2>&1 &` } }] },
        { toolCalls: [{ name: 'bash', arguments: { command: 'pwd' } }] },
        { toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
      ],
    });
    try {
      const agent = createAgent({
        name: 'shell-user',
        tools: [createBash(), terminate],
        policies: defaultPolicies({ maxSteps: 5 }),
      });
      const llm = createOpenAiLlm({ model: 'gpt-4o-mini', apiKey: 'sk-test', baseURL: server.baseURL, maxRetries: 0 });
      // No workspace on the tool: it works in the run's.
      const result = await run(agent, 'Where is the project?', { llm, workspace });
      expect(result.finishReason).toBe('terminated');
      const toolMessages = server.requests[2]?.messages.filter((m) => m.role === 'tool');
      expect(toolMessages?.map((m) => m.content)).toEqual(['[exit code 0]', `${workspace}/project\n[exit code 0]`]);
      expect(processesMatching(sleeper)).toEqual([]);
      server.assertConsumed();
    } finally {
      await server.close();
    }
  });

  it('cancelling the run interrupts the command; nothing of it is left when run() returns', async () => {
    const sleeper = nap();
    const llm = scriptedLlm([{ toolCalls: [{ name: 'bash', arguments: { command: `${sleeper} & ${sleeper}` } }] }]);
    const agent = createAgent({
      name: 'shell-user',
      tools: [createBash()],
      policies: defaultPolicies({ maxSteps: 3 }),
    });
    const controller = new AbortController();
    const running = run(agent, 'Wait', { llm, workspace, signal: controller.signal });
    await eventually(() => processesMatching(sleeper).length === 2);
    controller.abort();
    const result = await running;
    expect(result.finishReason).toBe('cancelled');
    expect(processesMatching(sleeper)).toEqual([]);
  });
});
