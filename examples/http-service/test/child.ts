import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { onCleanup, TOKEN, tempDir } from './helpers.js';

const here = dirname(fileURLToPath(import.meta.url));

/**
 * The service's sources as plain JavaScript in a directory of their own, for a child process to
 * run: resolves with the path of `entry` (`test/serviceProcess.ts`, or `src/main.ts`) there.
 */
export async function buildChild(entry = 'test/serviceProcess.ts'): Promise<string> {
  const out = await tempDir();
  const files = [
    ...(await readdir(join(here, '../src'))).map((name) => `src/${name}`),
    'test/serviceProcess.ts',
  ].filter((file) => file.endsWith('.ts'));
  for (const file of files) {
    const source = await readFile(join(here, '..', file), 'utf8');
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
      fileName: file,
    });
    await mkdir(join(out, dirname(file)), { recursive: true });
    await writeFile(join(out, file.replace(/\.ts$/, '.js')), outputText);
  }
  await writeFile(join(out, 'package.json'), '{"type":"module"}');
  await symlink(join(here, '../node_modules'), join(out, 'node_modules'));
  for (const dir of ['page', 'demo']) await symlink(join(here, '..', dir), join(out, dir));
  return join(out, entry.replace(/\.ts$/, '.js'));
}

export interface Child {
  readonly process: ChildProcess;
  readonly port: number;
  /** The address `main` prints for a person to open (with the token in its fragment). */
  readonly url?: string;
  readonly exited: Promise<unknown>;
  call(method: string, path: string, body?: object): Promise<{ status: number; json: Record<string, unknown> }>;
}

export async function startChild(
  script: string,
  args: string[],
  env: Record<string, string> = {},
  cwd?: string,
): Promise<Child> {
  const child = spawn(process.execPath, [script, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    ...(cwd ? { cwd } : {}),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  onCleanup(async () => {
    child.kill('SIGKILL');
    await exited;
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  // serviceProcess prints {"port": …}; main prints the address to open.
  const { port, url } = await new Promise<{ port: number; url?: string }>((resolve, reject) => {
    let stdout = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const line = stdout.split('\n').find((l) => l.startsWith('{"port"'));
      if (line) resolve(JSON.parse(line) as { port: number });
      const open = /^Open (http:\/\/127\.0\.0\.1:(\d+)\/#token=\S+)$/m.exec(stdout);
      if (open?.[1]) resolve({ port: Number(open[2]), url: open[1] });
    });
    child.on('exit', (code) => reject(new Error(`the service exited (${code}): ${stderr}`)));
  });
  const call = async (method: string, path: string, body?: object) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };
  return { process: child, port, exited, call, ...(url ? { url } : {}) };
}
