// `pnpm serve`'s program, the built dist/main.js, as a child process in a directory of its own
// (its workspace/ and workspace/service-data/ are made there), as a person starts it.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { client, onCleanup } from './helpers.js';

export const MAIN = join(import.meta.dirname, '..', 'dist', 'main.js');

export interface Served extends ReturnType<typeof client> {
  readonly process: ChildProcess;
  readonly port: number;
  /** The address it prints for a person to open: the studio, with the token in its fragment. */
  readonly url: string;
  readonly token: string;
  /** What it printed up to that address. */
  readonly stdout: string;
  readonly base: string;
  readonly exited: Promise<unknown>;
}

/** Starts dist/main.js in `cwd` with only `env` (and PATH); resolves once it prints the address to open. */
export async function serve(cwd: string, env: Record<string, string> = {}): Promise<Served> {
  if (!existsSync(MAIN))
    throw new Error('build the example first: pnpm --filter @openmanus/example-http-service build');
  const child = spawn(process.execPath, [MAIN], {
    cwd,
    env: { PATH: process.env.PATH ?? '', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  onCleanup(async () => {
    child.kill('SIGKILL');
    await exited;
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const { stdout, url, port, token } = await new Promise<{ stdout: string; url: string; port: number; token: string }>(
    (resolve, reject) => {
      let stdout = '';
      child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
        const open = /^Open (http:\/\/127\.0\.0\.1:(\d+)\/studio\/#token=(\S+))$/m.exec(stdout);
        if (open?.[1] && open[3]) resolve({ stdout, url: open[1], port: Number(open[2]), token: open[3] });
      });
      child.on('exit', (code) => reject(new Error(`the service exited (${code}): ${stderr}`)));
    },
  );
  const base = `http://127.0.0.1:${port}`;
  return { process: child, port, url, token, stdout, base, exited, ...client(base, token) };
}
