// Programs of their own on the same database file, for the tests of several processes and of a
// worker killed mid-run: the package's sources and test/children/*.ts, as plain JavaScript run by node.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import ts from 'typescript';

const packageDir = join(import.meta.dirname, '..');

export interface Children {
  /** The path of test/children/<name>.js. */
  script(name: string): string;
  remove(): Promise<void>;
}

/** Transpiles into a directory inside the package, so that '@openmanus/core' resolves as it does for the package. */
export async function buildChildren(): Promise<Children> {
  const out = await mkdtemp(join(packageDir, 'test', '.children-'));
  const files = [
    ...(await readdir(join(packageDir, 'src'))).map((name) => `src/${name}`),
    ...(await readdir(join(packageDir, 'test', 'children'))).map((name) => `test/children/${name}`),
  ].filter((file) => file.endsWith('.ts'));
  for (const file of files) {
    const { outputText } = ts.transpileModule(await readFile(join(packageDir, file), 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
      fileName: file,
    });
    await mkdir(join(out, dirname(file)), { recursive: true });
    await writeFile(join(out, file.replace(/\.ts$/, '.js')), outputText);
  }
  return {
    script: (name) => join(out, 'test', 'children', `${name}.js`),
    remove: () => rm(out, { recursive: true, force: true }),
  };
}

export interface Child {
  readonly process: ChildProcess;
  /** Writes a line to the child's standard input. */
  send(line: string): void;
  /** Resolves with the first line the child prints that `matches`; rejects if it exits first. */
  line(matches: (line: string) => boolean): Promise<string>;
  /** Resolves with the exit code (or signal) once the child has ended. */
  readonly exited: Promise<number | NodeJS.Signals>;
}

export function startChild(script: string, args: readonly string[]): Child {
  const child = spawn(process.execPath, [script, ...args], {
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const checks = new Set<() => void>();
  let ended = false;
  let partial = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    const pieces = (partial + chunk).split('\n');
    partial = pieces.pop() ?? '';
    lines.push(...pieces);
    for (const check of checks) check();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  // 'close': the process has exited and everything it printed has been read.
  const exited = new Promise<number | NodeJS.Signals>((resolve) =>
    child.on('close', (code, signal) => {
      ended = true;
      for (const check of checks) check();
      resolve(code ?? signal ?? 'SIGKILL');
    }),
  );
  const line = (matches: (line: string) => boolean) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const found = lines.find(matches);
        if (found === undefined && !ended) return;
        checks.delete(check);
        if (found !== undefined) resolve(found);
        else reject(new Error(`the child ended (${child.exitCode ?? child.signalCode}) first: ${stderr}`));
      };
      checks.add(check);
      check();
    });
  return { process: child, send: (text) => child.stdin.write(`${text}\n`), line, exited };
}
