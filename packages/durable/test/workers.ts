import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('./worker.mjs', import.meta.url));

export interface WorkerProcess {
  readonly child: ChildProcess;
  /** Resolves once the worker has launched and takes runs; rejects if it exits first. */
  readonly ready: Promise<void>;
  /** Resolves with the exit signal or code. */
  readonly exited: Promise<string>;
  /** Resolves once the worker has printed `text` on stdout. */
  said(text: string): Promise<void>;
  readonly stderr: () => string;
}

/** The environment of test/worker.mjs. */
export interface WorkerEnv {
  readonly DATABASE_URL: string;
  readonly DECISION_KEY: string;
  readonly WORKER_ID: string;
  readonly LLM_URL: string;
  readonly TOOL_LOG: string;
  readonly CONCURRENCY?: string;
  readonly CONTINUE_EVERY?: string;
  readonly APP_VERSION?: string;
  readonly HALT_AT_HANDOVER?: string;
  readonly LLM_MODEL?: string;
}

/** A real worker process (test/worker.mjs) with the given id, on the given database and model server. */
export function spawnWorker(env: WorkerEnv): WorkerProcess {
  const child = spawn(process.execPath, ['--no-deprecation', script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? `exit ${code}`)),
  );
  const said = (text: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!out.includes(text)) return;
        child.stdout?.off('data', check);
        resolve();
      };
      child.stdout?.on('data', check);
      check();
      void exited.then((how) =>
        reject(new Error(`worker ${env.WORKER_ID} exited (${how}) before it said "${text}":\n${err}`)),
      );
    });
  const ready = said('ready');
  return { child, ready, exited, said, stderr: () => err };
}
