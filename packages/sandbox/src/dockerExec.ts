// Commands in a container through the Engine API's exec: output capped, a time limit and an abort
// that kill everything the command started, and long-lived processes with live streams.
import { randomBytes } from 'node:crypto';
import { type Duplex, Writable } from 'node:stream';
import { setTimeout as delay, setImmediate as setImmediatePromise } from 'node:timers/promises';
import { type ExecOptions, type ExecResult, endingOfStatus, type SandboxProcess } from '@openmanus/core';
import type Docker from 'dockerode';
import { MARKER, RUN_SCRIPT, SIGNAL_SCRIPT } from './containerScripts.js';
import { pidsWithVariable, unreapedIn } from './hostProcesses.js';

const DEFAULT_MAX_OUTPUT = 1024 * 1024;

/** Who commands run as, and with what, in one container. */
export interface ExecContext {
  readonly container: Docker.Container;
  /** `uid:gid`. */
  readonly user: string;
  readonly modem: Docker['modem'];
  /** The host pid of the container's first process, when the daemon is local (to see its processes). */
  readonly hostPid?: number;
}

interface Started {
  readonly exec: Docker.Exec;
  readonly stream: Duplex;
}

async function startExec(
  context: ExecContext,
  cmd: readonly string[],
  options: { env?: Readonly<Record<string, string>>; stdin?: boolean },
): Promise<Started> {
  const exec = await context.container.exec({
    Cmd: [...cmd],
    User: context.user,
    AttachStdout: true,
    AttachStderr: true,
    AttachStdin: options.stdin === true,
    Tty: false,
    Env: Object.entries(options.env ?? {}).map(([name, value]) => `${name}=${value}`),
  });
  const stream = (await exec.start({ hijack: true, stdin: options.stdin === true })) as Duplex;
  return { exec, stream };
}

/** Resolves when the exec's stream has ended (its process and everything holding its output are gone). */
const ended = (stream: Duplex) =>
  new Promise<void>((resolve) => {
    stream.once('end', resolve);
    stream.once('close', resolve);
    stream.once('error', () => resolve());
  });

/** The exit code Docker recorded for a finished exec. */
async function exitCodeOf(exec: Docker.Exec): Promise<number | null> {
  for (let i = 0; i < 50; i++) {
    const info = await exec.inspect();
    if (!info.Running) return info.ExitCode ?? null;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return null;
}

/** Keeps the first `max` bytes written to it and counts the rest. */
class CappedSink extends Writable {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  dropped = 0;
  constructor(private readonly max: number) {
    super();
  }
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    const room = Math.max(0, this.max - this.kept);
    if (room > 0) this.chunks.push(chunk.subarray(0, room));
    this.kept += Math.min(room, chunk.length);
    this.dropped += Math.max(0, chunk.length - room);
    done();
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

/** Sends `signal` to the processes of call `token`: all of them, or all but its top process. */
async function signalCall(context: ExecContext, token: string, signal: 'KILL' | 'INT', scope: 'all' | 'foreground') {
  const { stream } = await startExec(context, ['/bin/sh', '-c', SIGNAL_SCRIPT, 'signal', token, signal, scope], {});
  stream.resume();
  await ended(stream);
}

/** How long each way of killing a call is given before the next one is tried. */
const KILL_GRACE_MS = 2000;

const pause = (ms: number) => delay(ms, undefined, { ref: false });
/** Resolves true when `done` settles within `ms`. */
const within = (done: Promise<void>, ms: number) => Promise.race([done.then(() => true), pause(ms).then(() => false)]);

/** Whether processes of call `token` are still alive (seen from the host: a local daemon's are visible). */
const leftovers = (token: string) => pidsWithVariable(MARKER, token).length > 0;

/**
 * Kills every process of call `token` and resolves when its stream has ended. The sweep runs in
 * the container; when it cannot finish (a fork bomb has filled the pids limit, so nothing new
 * starts there), the call's processes are killed from the host. As a last resort the stream is
 * dropped: whatever is left goes with the container.
 */
async function killCall(context: ExecContext, token: string, stream: Duplex, done: Promise<void>): Promise<void> {
  await Promise.race([signalCall(context, token, 'KILL', 'all').catch(() => {}), pause(KILL_GRACE_MS)]);
  const finished = await within(done, KILL_GRACE_MS);
  if (!finished || leftovers(token)) await killFromHost(context.container, token);
  if (!finished && !(await within(done, KILL_GRACE_MS))) stream.destroy();
  await reaped(context);
}

/**
 * Waits (a few seconds at most) until the killed processes are reaped by the container's init:
 * until then they still count against its pids limit, and the next command could not start.
 */
async function reaped(context: ExecContext): Promise<void> {
  if (context.hostPid === undefined) return;
  for (let i = 0; i < 150 && unreapedIn(context.hostPid) > 0; i++) await pause(20);
}

/** SIGKILLs the processes of call `token` the host sees; says how many there were. */
function killSeen(token: string): number {
  const pids = pidsWithVariable(MARKER, token);
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Ended, or not ours to kill.
    }
  }
  return pids.length;
}

/** Rounds of host kills before what is left is given up to the container's removal. */
const HOST_KILL_ROUNDS = 200;

/**
 * Kills the processes of call `token` from the host: first in the frozen container (no process
 * can fork then; thawed, the killed ones die before they run another instruction), then round
 * after round until none is left — all of them that way when the daemon cannot freeze the
 * container (a cgroup v1 freezer often fails under a fork loop): each round's kills free pids a
 * fork loop takes, so the rounds go on until none forks any more.
 */
async function killFromHost(container: Docker.Container, token: string): Promise<void> {
  const frozen = await container.pause().then(
    () => true,
    () => false,
  );
  if (frozen) {
    try {
      killSeen(token);
    } finally {
      await container.unpause().catch(() => {});
    }
  }
  for (let round = 0; round < HOST_KILL_ROUNDS && killSeen(token) > 0; round++) await setImmediatePromise();
}

const newToken = () => randomBytes(12).toString('hex');

/** The command wrapped so that its processes carry the call's marker and are swept when it ends. */
const wrapped = (token: string, cwd: string, command: readonly string[]) => [
  '/bin/sh',
  '-c',
  RUN_SCRIPT,
  'sandbox',
  token,
  cwd,
  ...command,
];

/** Runs one command to its end (or its time limit) and says how it ended. */
export async function execInContainer(
  context: ExecContext,
  command: readonly string[],
  options: ExecOptions & { readonly cwd: string },
): Promise<ExecResult> {
  if (command.length === 0) throw new Error('exec: the command is empty');
  options.signal?.throwIfAborted();
  const token = newToken();
  const max = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  const stdout = new CappedSink(max);
  const stderr = new CappedSink(max);
  const hasStdin = options.stdin !== undefined;
  const { exec, stream } = await startExec(context, wrapped(token, options.cwd, command), {
    ...(options.env ? { env: options.env } : {}),
    stdin: hasStdin,
  });
  const done = ended(stream);
  context.modem.demuxStream(stream, stdout, stderr);
  if (hasStdin) stream.end(options.stdin);

  let stopped: 'timeout' | 'abort' | undefined;
  let killing: Promise<void> | undefined;
  const stop = (why: 'timeout' | 'abort') => {
    if (stopped) return;
    stopped = why;
    killing = killCall(context, token, stream, done);
  };
  const timer = options.timeoutMs !== undefined ? setTimeout(() => stop('timeout'), options.timeoutMs) : undefined;
  const onAbort = () => stop('abort');
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await done;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
  // The command's own end sweeps what it started; should that sweep have failed (no room left
  // under the pids limit), what remains is killed now.
  if (killing) await killing;
  else if (leftovers(token)) {
    await killFromHost(context.container, token);
    await reaped(context);
  }
  // Stopped, it was killed with SIGKILL; else the shell in between passes a signal on as 128 + n.
  const ending = stopped ? { exitCode: null, signal: 'SIGKILL' } : endingOfStatus(await exitCodeOf(exec));
  return {
    ...ending,
    stdout: stdout.text(),
    stderr: stderr.text(),
    timedOut: stopped === 'timeout',
    droppedBytes: stdout.dropped + stderr.dropped,
  };
}

/** Starts a long-lived process (a shell) with its streams attached. */
export async function spawnInContainer(
  context: ExecContext,
  command: readonly string[],
  options: { readonly cwd: string; readonly env?: Readonly<Record<string, string>> },
): Promise<SandboxProcess> {
  if (command.length === 0) throw new Error('spawn: the command is empty');
  const token = newToken();
  const { exec, stream } = await startExec(context, wrapped(token, options.cwd, command), {
    ...(options.env ? { env: options.env } : {}),
    stdin: true,
  });
  const listeners = { stdout: [] as ((chunk: Uint8Array) => void)[], stderr: [] as ((chunk: Uint8Array) => void)[] };
  const relay = (to: ((chunk: Uint8Array) => void)[]) =>
    new Writable({
      write(chunk: Buffer, _encoding, next) {
        for (const listener of to) listener(chunk);
        next();
      },
    });
  context.modem.demuxStream(stream, relay(listeners.stdout), relay(listeners.stderr));
  const done = ended(stream);
  const exit = done.then(() =>
    exitCodeOf(exec)
      .catch(() => null)
      .then(endingOfStatus),
  );
  return {
    write: (data) => {
      stream.write(data);
    },
    onStdout: (listener) => void listeners.stdout.push(listener),
    onStderr: (listener) => void listeners.stderr.push(listener),
    onExit: (listener) => void exit.then((ending) => listener(ending.exitCode, ending.signal)),
    interrupt: () => void signalCall(context, token, 'INT', 'foreground').catch(() => {}),
    kill: async () => {
      await killCall(context, token, stream, done);
      await exit;
    },
  };
}

/** Runs a helper script as the sandbox's user and returns its output, or throws its stderr. */
export async function runScript(context: ExecContext, script: string, args: readonly string[]): Promise<Buffer> {
  const { exec, stream } = await startExec(context, ['/bin/sh', '-c', script, 'sandbox', ...args], {});
  const chunks: Buffer[] = [];
  const errors: Buffer[] = [];
  const collect = (into: Buffer[]) =>
    new Writable({
      write(chunk: Buffer, _encoding, next) {
        into.push(chunk);
        next();
      },
    });
  const done = ended(stream);
  context.modem.demuxStream(stream, collect(chunks), collect(errors));
  await done;
  const code = await exitCodeOf(exec);
  if (code !== 0) throw new Error(Buffer.concat(errors).toString('utf8').trim() || `exit code ${code}`);
  return Buffer.concat(chunks);
}
