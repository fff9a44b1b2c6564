import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('./worker.mjs', import.meta.url));

export interface WorkerProcess {
  readonly child: ChildProcess;
  /** Resolves once the worker has launched and takes runs; rejects if it exits first. */
  readonly ready: Promise<void>;
  /** Resolves with the exit signal or code. */
  readonly exited: Promise<string>;
  readonly stderr: () => string;
}

/** A real worker process (test/worker.mjs) with the given id, on the given database and model server. */
export function spawnWorker(env: {
  DATABASE_URL: string;
  WORKER_ID: string;
  LLM_URL: string;
  TOOL_LOG: string;
  CONCURRENCY?: string;
}): WorkerProcess {
  const child = spawn(process.execPath, ['--no-deprecation', script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? `exit ${code}`)),
  );
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve();
    });
    void exited.then((how) =>
      reject(new Error(`worker ${env.WORKER_ID} exited (${how}) before it was ready:\n${err}`)),
    );
  });
  return { child, ready, exited, stderr: () => err };
}
