// Commands in a container through the Engine API's exec: output capped, a time limit and an abort
// that kill everything the command started, and long-lived processes with live streams.
import { randomBytes } from 'node:crypto';
import { type Duplex, Readable, Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import type { ExecOptions, ExecResult, SandboxProcess } from '@openmanus/core';
import { endingOfStatus } from '@openmanus/core/internal';
import type Docker from 'dockerode';
import { MARKER, RUN_SCRIPT, SIGNAL_SCRIPT, WRAPPER_MARKER } from './containerScripts.js';
import { engineCall } from './engineCall.js';
import { type HostView, killMarked, processesWith, unreaped } from './hostProcesses.js';

const DEFAULT_MAX_OUTPUT = 1024 * 1024;

/** Who commands run as, and with what, in one container. */
export interface ExecContext {
  readonly container: Docker.Container;
  /** `uid:gid`. */
  readonly user: string;
  readonly modem: Docker['modem'];
  /** Where the host sees the container's processes, when the daemon is local (it changes when the container restarts). */
  readonly host: () => HostView | undefined;
  /** Ends every process in the container by restarting it: the last resort when a call's cannot be killed. */
  readonly restart: () => Promise<void>;
}

interface Started {
  readonly exec: Docker.Exec;
  readonly stream: Duplex;
}

/** The Engine's refusal to run anything in a paused (frozen) container. */
const isPaused = (error: unknown) =>
  (error as { statusCode?: number } | null)?.statusCode === 409 && /paused/i.test(String(error));

async function createAndStart(
  context: ExecContext,
  cmd: readonly string[],
  options: { env?: Readonly<Record<string, string>>; stdin?: boolean },
): Promise<Started> {
  const exec = await engineCall('exec create', (abortSignal) =>
    context.container.exec({
      Cmd: [...cmd],
      User: context.user,
      AttachStdout: true,
      AttachStderr: true,
      AttachStdin: options.stdin === true,
      Tty: false,
      Env: Object.entries(options.env ?? {}).map(([name, value]) => `${name}=${value}`),
      abortSignal,
    } as Docker.ExecCreateOptions),
  );
  const stream = (await engineCall('exec start', (abortSignal) =>
    exec.start({ hijack: true, stdin: options.stdin === true, abortSignal }),
  )) as Duplex;
  return { exec, stream };
}

/** Starts a command; a container left paused (frozen) is thawed first. */
async function startExec(
  context: ExecContext,
  cmd: readonly string[],
  options: { env?: Readonly<Record<string, string>>; stdin?: boolean },
): Promise<Started> {
  try {
    return await createAndStart(context, cmd, options);
  } catch (error) {
    if (!isPaused(error)) throw error;
    await engineCall('unpause', (abortSignal) => context.container.unpause({ abortSignal }));
    return createAndStart(context, cmd, options);
  }
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
    const info = await engineCall('exec inspect', (abortSignal) => exec.inspect({ abortSignal }));
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
  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

/** How long each way of killing a call is given before the next one is tried. */
const KILL_GRACE_MS = 2000;

const pause = (ms: number) => delay(ms, undefined, { ref: false });
/** Resolves true when `done` settles within `ms`. */
const within = (done: Promise<unknown>, ms: number) =>
  Promise.race([done.then(() => true), pause(ms).then(() => false)]);

/**
 * Sends `signal` to the processes of call `token`, from inside the container: all of them, or all
 * but its top process. Says whether the sweep ended within its grace (it cannot start, or not
 * finish, while a fork bomb fills the pids limit).
 */
async function signalCall(
  context: ExecContext,
  token: string,
  signal: 'KILL' | 'INT',
  scope: 'all' | 'foreground',
): Promise<boolean> {
  const sweep = startExec(context, ['/bin/sh', '-c', SIGNAL_SCRIPT, 'signal', token, signal, scope], {});
  const swept = sweep.then(({ stream }) => {
    stream.resume();
    return ended(stream);
  });
  const finished = await within(swept, KILL_GRACE_MS).catch(() => false);
  if (!finished) void sweep.then(({ stream }) => stream.destroy()).catch(() => {});
  return finished;
}

/** Host kills of a call before the container is restarted instead. */
const HOST_KILL_TRIES = 3;

/**
 * Kills what is left of call `token`: from the host when it sees the container (a fork loop
 * cannot outrun it there, see killMarked), else by the sweep inside. When neither ends it, the
 * container is restarted: its init killed, the kernel kills every other process of it at once.
 */
async function killLeft(context: ExecContext, token: string, done?: Promise<void>): Promise<void> {
  const view = context.host();
  if (view) {
    for (let i = 0; i < HOST_KILL_TRIES; i++) if (await killMarked(view, callMarks(token)).catch(() => true)) return;
  } else if ((await signalCall(context, token, 'KILL', 'all')) && (!done || (await within(done, KILL_GRACE_MS)))) {
    return;
  }
  await context.restart().catch(() => {});
}

/** Rounds of killing a call before its stream is dropped. */
const KILL_ROUNDS = 3;

/**
 * Kills every process of call `token` and resolves when its stream has ended. Round after round:
 * the exec's process may only start after its stream is open (a kill meanwhile finds nothing).
 * Should a process that left the call's marker behind still hold its output, the stream is dropped.
 */
async function killCall(context: ExecContext, token: string, stream: Duplex, done: Promise<void>): Promise<void> {
  let finished = false;
  for (let round = 0; round < KILL_ROUNDS && !finished; round++) {
    await killLeft(context, token, done);
    finished = await within(done, KILL_GRACE_MS);
  }
  if (!finished) stream.destroy();
  await reaped(context);
}

/** Whether processes of call `token` are still alive (only a local daemon's are seen). */
async function leftovers(context: ExecContext, token: string): Promise<boolean> {
  const view = context.host();
  return view !== undefined && (await processesWith(view, callMarks(token)).catch(() => [])).length > 0;
}

/**
 * Waits (a few seconds at most) until the killed processes are reaped by the container's init:
 * until then they still count against its pids limit, and the next command could not start.
 */
async function reaped(context: ExecContext): Promise<void> {
  const view = context.host();
  if (!view) return;
  for (let i = 0; i < 150 && (await unreaped(view)); i++) await pause(20);
}

const newToken = () => randomBytes(12).toString('hex');

/** The environment entries that mark the processes of call `token`: the command's, and its wrapper shell's. */
const callMarks = (token: string) => [`${MARKER}=${token}`, `${WRAPPER_MARKER}=${token}`];

/** The wrapper's environment: the caller's variables, and the wrapper's marker. */
const wrapperEnv = (token: string, env?: Readonly<Record<string, string>>) => ({ ...env, [WRAPPER_MARKER]: token });

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

/** How a command ended, its output as bytes. */
interface RawResult {
  readonly ending: ReturnType<typeof endingOfStatus>;
  readonly stdout: Buffer;
  readonly stderr: Buffer;
  readonly timedOut: boolean;
  readonly droppedBytes: number;
}

/** A command's options, its input possibly a stream, its output possibly sent on as it comes (a copy's tar stream). */
type RunOptions = Omit<ExecOptions, 'stdin'> & {
  readonly cwd: string;
  readonly stdin?: string | Uint8Array | Readable;
  /** Where stdout goes instead of being kept (nothing of it is capped or returned then). */
  readonly stdout?: Writable;
};

/** Runs one command to its end (or its time limit, or an abort): nothing it started runs after. */
async function runInContainer(
  context: ExecContext,
  command: readonly string[],
  options: RunOptions,
): Promise<RawResult> {
  if (command.length === 0) throw new Error('exec: the command is empty');
  options.signal?.throwIfAborted();
  const token = newToken();
  const max = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  const stdout = new CappedSink(max);
  const stderr = new CappedSink(max);
  const hasStdin = options.stdin !== undefined;
  const { exec, stream } = await startExec(context, wrapped(token, options.cwd, command), {
    env: wrapperEnv(token, options.env),
    stdin: hasStdin,
  });
  const done = ended(stream);
  context.modem.demuxStream(stream, options.stdout ?? stdout, stderr);
  if (options.stdin instanceof Readable) options.stdin.pipe(stream);
  else if (hasStdin) stream.end(options.stdin);

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
  // Aborted while the exec was starting.
  if (options.signal?.aborted) stop('abort');
  try {
    await done;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
  // The command's own end sweeps what it started; should that sweep have failed (no room left
  // under the pids limit), what remains is killed now.
  if (killing) await killing;
  else if (await leftovers(context, token)) {
    await killLeft(context, token);
    await reaped(context);
  }
  // Stopped, it was killed with SIGKILL; else the shell in between passes a signal on as 128 + n.
  const ending = stopped
    ? { exitCode: null, signal: 'SIGKILL' }
    : endingOfStatus(await exitCodeOf(exec).catch(() => null));
  return {
    ending,
    stdout: stdout.bytes(),
    stderr: stderr.bytes(),
    timedOut: stopped === 'timeout',
    droppedBytes: stdout.dropped + stderr.dropped,
  };
}

/** Runs one command to its end (or its time limit) and says how it ended. */
export async function execInContainer(
  context: ExecContext,
  command: readonly string[],
  options: ExecOptions & { readonly cwd: string },
): Promise<ExecResult> {
  const result = await runInContainer(context, command, options);
  return {
    ...result.ending,
    stdout: result.stdout.toString('utf8'),
    stderr: result.stderr.toString('utf8'),
    timedOut: result.timedOut,
    droppedBytes: result.droppedBytes,
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
    env: wrapperEnv(token, options.env),
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
    interrupt: () => void signalCall(context, token, 'INT', 'foreground'),
    kill: async () => {
      await killCall(context, token, stream, done);
      await exit;
    },
  };
}

/** How long a helper script (a file operation, a copy) may run. */
const SCRIPT_TIMEOUT_MS = 300_000;

/**
 * Runs a helper script as the sandbox's user with `stdin`, and returns its output (at most
 * `maxOutputBytes`; nothing when it goes to `stdout`), or throws its stderr.
 */
export async function runScript(
  context: ExecContext,
  script: string,
  args: readonly string[],
  options: {
    readonly stdin?: Uint8Array | Readable;
    readonly stdout?: Writable;
    readonly maxOutputBytes?: number;
  } = {},
): Promise<Buffer> {
  const result = await runInContainer(context, ['/bin/sh', '-c', script, 'sandbox', ...args], {
    cwd: '/',
    timeoutMs: SCRIPT_TIMEOUT_MS,
    ...options,
  });
  if (result.timedOut) throw new Error(`it took longer than ${SCRIPT_TIMEOUT_MS / 1000} s`);
  if (result.ending.exitCode !== 0)
    throw new Error(result.stderr.toString('utf8').trim() || `exit code ${result.ending.exitCode}`);
  return result.stdout;
}
