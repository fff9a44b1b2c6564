// A local stand-in for the Daytona API: just the endpoints the provider's SDK calls hit, on
// 127.0.0.1. Daytona's cloud cannot be reached from here. Its toolbox part acts as Daytona's
// toolbox daemon does inside a sandbox — real commands through sh, real files, sessions whose
// commands run in the background with their input sent and their output followed over a
// WebSocket — only with no container around it: the tests point the provider's workspace at a
// temporary directory. Every process it starts for a sandbox carries that sandbox's id in its
// environment, so that deleting the sandbox ends them all, as deleting a real one does.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { constants } from 'node:os';
import { dirname, join } from 'node:path';
import { type WebSocket, WebSocketServer } from 'ws';

/** The host pids whose environment holds `variable=value` (the stand-in's processes run on the host). */
function pidsWithVariable(variable: string, value: string): number[] {
  const needle = `\0${variable}=${value}\0`;
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        return `\0${readFileSync(`/proc/${entry}/environ`, 'latin1')}`.includes(needle);
      } catch {
        return false;
      }
    })
    .map(Number);
}

export interface StandInCall {
  readonly method: string;
  readonly path: string;
  readonly authorization?: string;
}

export interface DaytonaStandIn {
  readonly url: string;
  /** Every request, in order. */
  readonly calls: StandInCall[];
  /** The create requests' bodies. */
  readonly created: Record<string, unknown>[];
  /** Sandboxes made and not deleted, by id. */
  readonly live: Set<string>;
  /** The ids of a sandbox's sessions not deleted. */
  sessions(sandboxId: string): string[];
  /** Answer every request whose path matches with HTTP 500. */
  failOn(pattern: RegExp | undefined): void;
  close(): Promise<void>;
}

/** The variable every process of a sandbox carries: its id. */
const SANDBOX_VARIABLE = 'DAYTONA_STANDIN_SANDBOX';
const STDOUT_PREFIX = Buffer.from([1, 1, 1]);
const STDERR_PREFIX = Buffer.from([2, 2, 2]);

/** A sandbox process's environment: a clean one, as the daemon's, with the sandbox's mark. */
const sandboxEnv = (sandboxId: string, envs: Record<string, string> = {}) => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: '/tmp',
  ...envs,
  [SANDBOX_VARIABLE]: sandboxId,
});

/** Sends `signal` to a process group, if it is still there. */
const killGroup = (child: ChildProcess, signal: NodeJS.Signals) => {
  try {
    if (child.pid) process.kill(-child.pid, signal);
  } catch {
    // Gone already.
  }
};

/** The toolbox daemon's answer to a command: output together, or 408 past its limit. */
function execute(
  sandboxId: string,
  command: string,
  cwd: string | undefined,
  envs: Record<string, string>,
  timeoutSec: number,
) {
  return new Promise<{ status: number; body: unknown }>((settle) => {
    const child = spawn('sh', ['-c', command], {
      cwd,
      env: sandboxEnv(sandboxId, envs),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    const timer = setTimeout(() => {
      killGroup(child, 'SIGKILL');
      settle({ status: 408, body: { message: 'command execution timeout', statusCode: 408 } });
    }, timeoutSec * 1000);
    child.on('error', (error) => {
      clearTimeout(timer);
      settle({ status: 400, body: { message: error.message, statusCode: 400 } });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      settle({ status: 200, body: { exitCode: code ?? -1, result: Buffer.concat(chunks).toString() } });
    });
  });
}

/** A command of a session, run in the background as the daemon runs it. */
interface SessionCommand {
  readonly id: string;
  readonly command: string;
  readonly child: ChildProcess;
  /** The daemon's log: each line of output with its stream's prefix. */
  log: Buffer;
  exitCode?: number;
  /** The output is complete: followers are closed, no one new is added. */
  done: boolean;
  readonly followers: Set<WebSocket>;
  /** Input is copied into the output (the daemon's default). */
  readonly echo: boolean;
  readonly ended: Promise<void>;
}

type Session = Map<string, SessionCommand>;

/** Starts `command` as a session command: its output kept line by line, as the daemon keeps it. */
function startSessionCommand(sandboxId: string, command: string, echo: boolean): SessionCommand {
  const child = spawn('sh', ['-c', command], {
    env: sandboxEnv(sandboxId),
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin?.on('error', () => {});
  let finish = () => {};
  const entry: SessionCommand = {
    id: randomUUID(),
    command,
    child,
    log: Buffer.alloc(0),
    done: false,
    followers: new Set(),
    echo,
    ended: new Promise<void>((resolve) => {
      finish = resolve;
    }),
  };
  const append = (bytes: Buffer) => {
    entry.log = Buffer.concat([entry.log, bytes]);
    for (const follower of entry.followers) follower.send(bytes);
  };
  // The daemon prefixes whole lines: a line reaches the log when it ends (or the stream does).
  const lines = (prefix: Buffer) => {
    let pending = Buffer.alloc(0);
    return {
      add(chunk: Buffer) {
        pending = Buffer.concat([pending, chunk]);
        for (let end = pending.indexOf(10); end >= 0; end = pending.indexOf(10)) {
          append(Buffer.concat([prefix, pending.subarray(0, end + 1)]));
          pending = pending.subarray(end + 1);
        }
      },
      flush() {
        if (pending.length > 0) append(Buffer.concat([prefix, pending, Buffer.from('\n')]));
        pending = Buffer.alloc(0);
      },
    };
  };
  const out = lines(STDOUT_PREFIX);
  const err = lines(STDERR_PREFIX);
  child.stdout?.on('data', (chunk: Buffer) => out.add(chunk));
  child.stderr?.on('data', (chunk: Buffer) => err.add(chunk));
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const end = () => {
    if (entry.done) return;
    out.flush();
    err.flush();
    entry.done = true;
    for (const follower of entry.followers) follower.close(1000);
    entry.followers.clear();
    finish();
  };
  child.on('exit', (code, signal) => {
    // As the daemon's wrapper records it: a shell's status, 128 + n for a signal.
    entry.exitCode = code ?? 128 + (signal ? constants.signals[signal] : 0);
    // The stream ends with the command, once its output has been read (what it left running and
    // still holding the output does not keep the stream open).
    void Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 1000))]).then(end);
  });
  child.on('error', () => {
    entry.exitCode = 127;
    end();
  });
  return entry;
}

/** A session command's log without its prefixes: stdout, stderr, and both together. */
function demux(log: Buffer) {
  const parts = { stdout: '', stderr: '', output: '' };
  let stream: 'stdout' | 'stderr' | undefined;
  let from = 0;
  const take = (to: number) => {
    const text = log.subarray(from, to).toString();
    parts.output += text;
    if (stream) parts[stream] += text;
  };
  for (let i = 0; i + 3 <= log.length; i++) {
    const prefix = log.subarray(i, i + 3);
    const next = prefix.equals(STDOUT_PREFIX) ? 'stdout' : prefix.equals(STDERR_PREFIX) ? 'stderr' : undefined;
    if (!next) continue;
    take(i);
    stream = next;
    from = i + 3;
    i += 2;
  }
  take(log.length);
  return parts;
}

async function body(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A Web Request of the incoming one, to parse its multipart form. */
const webRequest = async (request: IncomingMessage, raw: Buffer) =>
  new Request('http://stand-in/', {
    method: 'POST',
    headers: { 'content-type': request.headers['content-type'] ?? '' },
    body: raw,
  });

export async function startDaytonaStandIn(): Promise<DaytonaStandIn> {
  const calls: StandInCall[] = [];
  const created: Record<string, unknown>[] = [];
  const live = new Set<string>();
  /** Each live sandbox's sessions, by id. */
  const sessions = new Map<string, Map<string, Session>>();
  let failing: RegExp | undefined;
  let url = '';

  const sandboxDto = (id: string, state: string) => ({
    id,
    name: id,
    organizationId: 'org',
    user: 'daytona',
    env: {},
    labels: {},
    public: true,
    target: 'us',
    cpu: 1,
    gpu: 0,
    memory: 1,
    disk: 3,
    state,
    toolboxProxyUrl: `${url}/toolbox`,
  });

  /** Ends a session's commands and closes their streams, as deleting it does. */
  const endSession = (session: Session) => {
    for (const command of session.values()) killGroup(command.child, 'SIGKILL');
  };

  /** Deletes a sandbox: every process it ran (whatever group it is in) ends with it. */
  const deleteSandbox = (id: string) => {
    live.delete(id);
    for (const session of sessions.get(id)?.values() ?? []) endSession(session);
    sessions.delete(id);
    for (const pid of pidsWithVariable(SANDBOX_VARIABLE, id)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Ended meanwhile.
      }
    }
  };

  /** The session command a path names: `/process/session/<session>/command/<command>…`. */
  const commandOf = (sandboxId: string, sessionId: string, commandId: string) =>
    sessions.get(sandboxId)?.get(sessionId)?.get(commandId);

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const address = new URL(request.url ?? '/', url);
    const method = request.method ?? 'GET';
    const path = address.pathname;
    const authorization = request.headers.authorization;
    calls.push({ method, path, ...(authorization ? { authorization } : {}) });
    const send = (status: number, payload?: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(payload === undefined ? '' : JSON.stringify(payload));
    };
    if (failing?.test(path)) return send(500, { message: 'stand-in: internal error', statusCode: 500 });
    const raw = await body(request);
    const json = () => JSON.parse(raw.toString() || '{}') as Record<string, unknown>;
    const query = (key: string) => address.searchParams.get(key) ?? '';

    if (method === 'POST' && path === '/sandbox') {
      const id = randomUUID();
      created.push(json());
      live.add(id);
      return send(200, sandboxDto(id, 'started'));
    }
    let match = /^\/sandbox\/([^/]+)$/.exec(path);
    if (match?.[1] && method === 'DELETE') {
      deleteSandbox(match[1]);
      return send(200, sandboxDto(match[1], 'destroying'));
    }
    match = /^\/sandbox\/([^/]+)\/ports\/(\d+)\/preview-url$/.exec(path);
    if (match && method === 'GET') {
      return send(200, { sandboxId: match[1], url: `https://${match[2]}-${match[1]}.proxy.stand-in`, token: 'tok' });
    }
    match = /^\/toolbox\/([^/]+)(\/.*)$/.exec(path);
    const sandboxId = match?.[1];
    const tool = match?.[2];
    if (!sandboxId || !live.has(sandboxId) || !tool)
      return send(404, { message: `no route ${method} ${path}`, statusCode: 404 });

    if (method === 'POST' && tool === '/process/execute') {
      const { command, cwd, envs, timeout } = json() as {
        command: string;
        cwd?: string;
        envs?: Record<string, string>;
        timeout?: number;
      };
      const answer = await execute(sandboxId, command, cwd, envs ?? {}, timeout ?? 10);
      return send(answer.status, answer.body);
    }
    const ours = sessions.get(sandboxId) ?? new Map<string, Session>();
    sessions.set(sandboxId, ours);
    if (method === 'POST' && tool === '/process/session') {
      const { sessionId } = json() as { sessionId: string };
      if (ours.has(sessionId)) return send(409, { message: 'session already exists', statusCode: 409 });
      ours.set(sessionId, new Map());
      return send(201);
    }
    const inSession = /^\/process\/session\/([^/]+)(\/.*)?$/.exec(tool);
    const session = inSession?.[1] ? ours.get(inSession[1]) : undefined;
    if (inSession && !session) return send(404, { message: 'session not found', statusCode: 404 });
    if (inSession?.[1] && session) {
      const rest = inSession[2] ?? '';
      if (method === 'DELETE' && rest === '') {
        endSession(session);
        ours.delete(inSession[1]);
        return send(204);
      }
      const commandView = (command: SessionCommand) => ({
        id: command.id,
        command: command.command,
        ...(command.exitCode !== undefined ? { exitCode: command.exitCode } : {}),
      });
      if (method === 'GET' && rest === '')
        return send(200, { sessionId: inSession[1], commands: [...session.values()].map(commandView) });
      if (method === 'POST' && rest === '/exec') {
        const request = json() as { command: string; runAsync?: boolean; async?: boolean; suppressInputEcho?: boolean };
        const command = startSessionCommand(sandboxId, request.command, request.suppressInputEcho !== true);
        session.set(command.id, command);
        if (request.runAsync || request.async) return send(202, { cmdId: command.id });
        await command.ended;
        return send(200, { cmdId: command.id, exitCode: command.exitCode, ...demux(command.log) });
      }
      const inCommand = /^\/command\/([^/]+)(\/.*)?$/.exec(rest);
      const command = inCommand?.[1] ? session.get(inCommand[1]) : undefined;
      if (!command) return send(404, { message: 'command not found', statusCode: 404 });
      if (method === 'GET' && inCommand?.[2] === undefined) return send(200, commandView(command));
      if (method === 'GET' && inCommand?.[2] === '/logs') return send(200, demux(command.log));
      if (method === 'POST' && inCommand?.[2] === '/input') {
        if (command.exitCode !== undefined)
          return send(410, { message: `command has already completed with exit code ${command.exitCode}` });
        // As the daemon: input is a line; it is copied into the output unless told not to.
        let { data } = json() as { data: string };
        if (!data.endsWith('\n')) data += '\n';
        command.child.stdin?.write(data);
        if (command.echo) command.log = Buffer.concat([command.log, STDOUT_PREFIX, Buffer.from(data)]);
        return send(204);
      }
    }
    if (method === 'POST' && tool === '/files/folder') {
      await mkdir(query('path'), { recursive: true });
      return send(200);
    }
    if (method === 'POST' && tool === '/files/bulk-upload') {
      const form = await (await webRequest(request, raw)).formData();
      for (let i = 0; form.has(`files[${i}].path`); i++) {
        const target = String(form.get(`files[${i}].path`));
        const file = form.get(`files[${i}].file`) as Blob;
        await mkdir(dirname(target), { recursive: true });
        await writeFile(target, Buffer.from(await file.arrayBuffer()));
      }
      return send(200);
    }
    if (method === 'POST' && tool === '/files/bulk-download') {
      const { paths } = json() as { paths: string[] };
      const form = new FormData();
      for (const source of paths) {
        const data = await readFile(source).catch(() => undefined);
        if (data) form.append('file', new Blob([data]), source);
        else
          form.append(
            'error',
            new Blob([JSON.stringify({ message: 'file not found', statusCode: 404 })], { type: 'application/json' }),
            source,
          );
      }
      const web = new Response(form);
      response.writeHead(200, { 'content-type': web.headers.get('content-type') ?? '' });
      return void response.end(Buffer.from(await web.arrayBuffer()));
    }
    if (tool === '/files' && method === 'GET') {
      const dir = query('path');
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => undefined);
      if (!entries) return send(404, { message: `no such directory ${dir}`, statusCode: 404 });
      return send(
        200,
        await Promise.all(
          entries.map(async (entry) => ({
            name: entry.name,
            isDir: entry.isDirectory(),
            size: entry.isDirectory() ? 4096 : (await stat(join(dir, entry.name))).size,
            mode: entry.isDirectory() ? 'drwxr-xr-x' : entry.isSymbolicLink() ? 'Lrwxrwxrwx' : '-rw-r--r--',
            modTime: new Date().toISOString(),
            owner: 'daytona',
            group: 'daytona',
            permissions: '0644',
          })),
        ),
      );
    }
    if (tool === '/files' && method === 'DELETE') {
      const removed = await rm(query('path'), { recursive: query('recursive') === 'true' }).then(
        () => true,
        () => false,
      );
      return removed ? send(204) : send(404, { message: 'file not found', statusCode: 404 });
    }
    if (tool === '/files/info' && method === 'GET') {
      const info = await stat(query('path')).catch(() => undefined);
      if (!info) return send(404, { message: 'file not found', statusCode: 404 });
      return send(200, {
        name: query('path'),
        isDir: info.isDirectory(),
        size: info.size,
        mode: '',
        modTime: '',
        owner: '',
        group: '',
        permissions: '',
      });
    }
    send(404, { message: `stand-in: no route ${method} ${path}`, statusCode: 404 });
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ message: String(error), statusCode: 500 }));
    });
  });
  // A session command's output, followed over a WebSocket until the command ends.
  const sockets = new WebSocketServer({ noServer: true });
  server.on('upgrade', (request, socket, head) => {
    const path = new URL(request.url ?? '/', url).pathname;
    calls.push({ method: 'WEBSOCKET', path });
    const match = /^\/toolbox\/([^/]+)\/process\/session\/([^/]+)\/command\/([^/]+)\/logs$/.exec(path);
    const command = match?.[1] && match[2] && match[3] ? commandOf(match[1], match[2], match[3]) : undefined;
    if (!command || failing?.test(path)) {
      socket.end(`HTTP/1.1 ${command ? 500 : 404} stand-in\r\nconnection: close\r\n\r\n`);
      return;
    }
    sockets.handleUpgrade(request, socket, head, (follower) => {
      if (command.log.length > 0) follower.send(command.log);
      if (command.done) return follower.close(1000);
      command.followers.add(follower);
      follower.on('close', () => command.followers.delete(follower));
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    calls,
    created,
    live,
    sessions: (sandboxId) => [...(sessions.get(sandboxId)?.keys() ?? [])],
    failOn: (pattern) => {
      failing = pattern;
    },
    close: () =>
      new Promise<void>((done) => {
        for (const id of [...live]) deleteSandbox(id);
        for (const follower of sockets.clients) follower.terminate();
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
