// A long-lived process (a shell) in a Daytona sandbox, through the toolbox's session API: the
// process is a session's command run asynchronously; input goes through the command's input
// endpoint, output streams back over its logs WebSocket (stdout and stderr apart), and the exit
// code is the command's once the stream ends. Like the Docker provider's processes it carries a
// marker variable, so that ending it ends everything it started — a background job, a `setsid`
// daemon — not only the session's process group.
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { Sandbox as RemoteSandbox } from '@daytonaio/sdk';
import type { SandboxProcess } from '@openmanus/core';
import { RUN_SCRIPT, SIGNAL_SCRIPT } from './containerScripts.js';
import { shellLine } from './daytonaShell.js';

export interface DaytonaSpawnOptions {
  /** The working directory, absolute. */
  readonly cwd: string;
  readonly env?: Readonly<Record<string, string>>;
}

interface Exit {
  readonly code: number | null;
  readonly signal?: string;
}

/** How long each way of ending the process is given before the next one is tried. */
const KILL_GRACE_MS = 2000;
/** A signal sweep's own time limit at the service, in seconds. */
const SWEEP_TIMEOUT_S = 10;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const pause = (ms: number) => delay(ms, undefined, { ref: false });
const within = <T>(done: Promise<T>, ms: number) => Promise.race([done.then(() => true), pause(ms).then(() => false)]);

/** Starts `command` in the sandbox as a session command and attaches to its streams. */
export async function spawnInDaytona(
  remote: RemoteSandbox,
  command: readonly string[],
  options: DaytonaSpawnOptions,
): Promise<SandboxProcess> {
  if (command.length === 0) throw new Error('spawn: the command is empty');
  const assignments = Object.entries(options.env ?? {}).map(([name, value]) => {
    if (!VARIABLE_NAME.test(name)) throw new Error(`spawn: "${name}" is not a variable name`);
    return `${name}=${value}`;
  });
  const token = randomBytes(12).toString('hex');
  const sessionId = `openmanus-${token}`;
  const { process: api } = remote;
  await api.createSession(sessionId);
  let cmdId: string;
  try {
    const started = await api.executeSessionCommand(sessionId, {
      command: shellLine([
        ...(assignments.length > 0 ? ['env', ...assignments] : []),
        '/bin/sh',
        '-c',
        RUN_SCRIPT,
        'sandbox',
        token,
        options.cwd,
        ...command,
      ]),
      runAsync: true,
      // Input is not copied into the output (the service's default is to echo it, as a terminal would).
      suppressInputEcho: true,
    });
    cmdId = started.cmdId;
  } catch (error) {
    await api.deleteSession(sessionId).catch(() => {});
    throw error;
  }

  const listeners = { stdout: [] as ((chunk: Uint8Array) => void)[], stderr: [] as ((chunk: Uint8Array) => void)[] };
  const relay = (to: ((chunk: Uint8Array) => void)[]) => (text: string) => {
    const chunk = Buffer.from(text);
    for (const listener of to) listener(chunk);
  };
  // Resolves when the stream ends: the command has ended (or its session was deleted).
  const streamed = api
    .getSessionCommandLogs(sessionId, cmdId, relay(listeners.stdout), relay(listeners.stderr))
    .catch(() => {});

  let settle: (exit: Exit) => void = () => {};
  const exit = new Promise<Exit>((resolve) => {
    settle = resolve;
  });
  /** The command's exit code, which the service records as its stream ends; null once its session is gone. */
  const exitCode = async (): Promise<number | null> => {
    for (let attempt = 0; attempt < 20; attempt++) {
      const recorded = await api.getSessionCommand(sessionId, cmdId).catch(() => undefined);
      if (!recorded) return null;
      if (typeof recorded.exitCode === 'number') return recorded.exitCode;
      await pause(50);
    }
    return null;
  };
  void streamed.then(async () => settle({ code: await exitCode() }));

  // Input in order: each write is a request of its own.
  let writes: Promise<void> = Promise.resolve();
  const signal = (name: 'INT' | 'KILL', scope: 'all' | 'foreground') =>
    api
      .executeCommand(
        shellLine(['/bin/sh', '-c', SIGNAL_SCRIPT, 'signal', token, name, scope]),
        undefined,
        undefined,
        SWEEP_TIMEOUT_S,
      )
      .then(
        () => {},
        () => {},
      );

  let killing: Promise<void> | undefined;
  const kill = async () => {
    // Every process carrying the marker, then (after its exit code is in) the session with the
    // rest of its process group; should the stream still not end, the process counts as killed.
    await signal('KILL', 'all');
    await within(exit, KILL_GRACE_MS);
    await api.deleteSession(sessionId).catch(() => {});
    if (!(await within(exit, KILL_GRACE_MS))) settle({ code: null, signal: 'SIGKILL' });
  };

  return {
    write: (data) => {
      const text = typeof data === 'string' ? data : Buffer.from(data).toString('utf8');
      writes = writes.then(() => api.sendSessionCommandInput(sessionId, cmdId, text)).catch(() => {});
    },
    onStdout: (listener) => void listeners.stdout.push(listener),
    onStderr: (listener) => void listeners.stderr.push(listener),
    onExit: (listener) => void exit.then(({ code, signal: name }) => listener(code, name)),
    interrupt: () => void signal('INT', 'foreground'),
    kill: async () => {
      killing ??= kill();
      await killing;
      await exit;
    },
  };
}
