// The package's sources as plain JavaScript in a directory of their own, for a child process the
// tests can kill: nothing to build first, and the child runs exactly what the tests import.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { onCleanup, TOKEN, tempDir } from './httpHelpers.js';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');

/** `src/` and `test/serverProcess.ts` transpiled into a temporary directory; resolves with the program's path there. */
export async function buildChild(): Promise<string> {
  const out = await tempDir();
  const files = [...(await readdir(join(pkg, 'src'))).map((name) => `src/${name}`), 'test/serverProcess.ts'].filter(
    (file) => file.endsWith('.ts'),
  );
  for (const file of files) {
    const source = await readFile(join(pkg, file), 'utf8');
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
      fileName: file,
    });
    await mkdir(join(out, dirname(file)), { recursive: true });
    await writeFile(join(out, file.replace(/\.ts$/, '.js')), outputText);
  }
  await writeFile(join(out, 'package.json'), '{"type":"module"}');
  // The package's dependencies, and the studio's files next to src/ as in the package.
  await symlink(join(pkg, 'node_modules'), join(out, 'node_modules'));
  await symlink(join(pkg, 'studio'), join(out, 'studio'));
  return join(out, 'test/serverProcess.js');
}

export interface Child {
  readonly process: ChildProcess;
  readonly port: number;
  /** The unfinished runs it resumed on start. */
  readonly resumed: readonly string[];
  readonly exited: Promise<unknown>;
  call(method: string, path: string, body?: object): Promise<{ status: number; json: Record<string, unknown> }>;
}

/** Starts `program` with `args`; resolves once it has printed its port. Killed after the test. */
export async function startChild(program: string, args: string[], env: Record<string, string> = {}): Promise<Child> {
  const child = spawn(process.execPath, [program, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  onCleanup(async () => {
    child.kill('SIGKILL');
    await exited;
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const { port, resumed } = await new Promise<{ port: number; resumed: string[] }>((resolve, reject) => {
    let stdout = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const line = stdout.split('\n').find((l) => l.startsWith('{"port"'));
      if (line) resolve(JSON.parse(line) as { port: number; resumed: string[] });
    });
    child.on('exit', (code) => reject(new Error(`the server exited (${code}): ${stderr}`)));
  });
  const call = async (method: string, path: string, body?: object) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };
  return { process: child, port, resumed, exited, call };
}
