// A local stand-in for the Daytona API: just the endpoints the provider's SDK calls hit, on
// 127.0.0.1. Daytona's cloud cannot be reached from here. Its toolbox part acts as Daytona's
// toolbox daemon does inside a sandbox — real commands through sh, real files — only with no
// container around it: the tests point the provider's workspace at a temporary directory.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';

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
  /** Answer every request whose path matches with HTTP 500. */
  failOn(pattern: RegExp | undefined): void;
  close(): Promise<void>;
}

/** The toolbox daemon's answer to a command: output together, or 408 past its limit. */
function execute(command: string, cwd: string | undefined, envs: Record<string, string>, timeoutSec: number) {
  return new Promise<{ status: number; body: unknown }>((settle) => {
    const child = spawn('sh', ['-c', command], {
      cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/tmp', ...envs },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    const timer = setTimeout(() => {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
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
      live.delete(match[1]);
      return send(200, sandboxDto(match[1], 'destroying'));
    }
    match = /^\/sandbox\/([^/]+)\/ports\/(\d+)\/preview-url$/.exec(path);
    if (match && method === 'GET') {
      return send(200, { sandboxId: match[1], url: `https://${match[2]}-${match[1]}.proxy.stand-in`, token: 'tok' });
    }
    match = /^\/toolbox\/([^/]+)(\/.*)$/.exec(path);
    const tool = match?.[2];
    if (!match?.[1] || !live.has(match[1]) || !tool)
      return send(404, { message: `no route ${method} ${path}`, statusCode: 404 });

    if (method === 'POST' && tool === '/process/execute') {
      const { command, cwd, envs, timeout } = json() as {
        command: string;
        cwd?: string;
        envs?: Record<string, string>;
        timeout?: number;
      };
      const answer = await execute(command, cwd, envs ?? {}, timeout ?? 10);
      return send(answer.status, answer.body);
    }
    if (method === 'POST' && tool === '/process/session') return send(201);
    if (method === 'POST' && /^\/process\/session\/[^/]+\/exec$/.test(tool)) return send(200, { cmdId: randomUUID() });
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
      await rm(query('path'), { recursive: query('recursive') === 'true' });
      return send(204);
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
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    calls,
    created,
    live,
    failOn: (pattern) => {
      failing = pattern;
    },
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
