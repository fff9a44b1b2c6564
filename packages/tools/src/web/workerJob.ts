// A job run in a worker thread of its own, so that whatever the job does with untrusted input —
// a loop that does not end, memory it keeps taking, a promise rejected that nobody awaits —
// stays in the worker: the host's event loop keeps running, the time limit holds (the worker is
// terminated), and the caller gets an Error that says what happened.
import { parentPort, Worker } from 'node:worker_threads';
import { hasErrorCode, messageOf, OpenManusError } from '@openmanus/core';
import { linkAbort } from '@openmanus/core/internal';
import { SOURCE_LOADER } from './sourceLoader.js';

export interface WorkerJobLimits {
  /** Time from the worker's start to its answer; then it is terminated. */
  readonly timeoutMs: number;
  /** Heap the worker may use, in megabytes. */
  readonly maxMemoryMb: number;
  /** Terminates the worker when it aborts. */
  readonly signal?: AbortSignal;
  /** What the job does, for the errors: "drawing the chart". */
  readonly task: string;
}

/** The job did not answer within its time limit, and was stopped. */
export class WorkerTimeoutError extends OpenManusError<'WORKER_TIMEOUT'> {
  static readonly codes = ['WORKER_TIMEOUT'] as const;
  override readonly name = 'WorkerTimeoutError';
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super('WORKER_TIMEOUT', message, options);
  }
  static override isInstance(value: unknown): value is WorkerTimeoutError {
    return hasErrorCode(value, WorkerTimeoutError.codes);
  }
}

type Answer<O> = { readonly ok: true; readonly value: O } | { readonly ok: false; readonly message: string };

// Run from the sources (the package's tests), the worker's module is TypeScript too.
const fromSource = import.meta.url.endsWith('.ts');

/** This process's Node options (e.g. a loader it runs with), but those only a main script takes. */
const inherited = () => process.execArgv.filter((option) => !option.startsWith('--input-type'));

export interface WorkerJobs<I, O> {
  /** Runs one job (one at a time): rejects as {@link runWorkerJob} does. */
  run(input: I, limits: Pick<WorkerJobLimits, 'timeoutMs' | 'signal'>): Promise<O>;
  /** Ends the worker; call when the jobs are done. */
  close(): void;
}

/**
 * Jobs that the module at `entry` answers (with {@link answerJobs}), run one at a time in a worker
 * thread, started with the first; a job that reaches a limit or fails ends the worker, and the next
 * job starts a new one. For a batch of one caller's jobs (the charts of one call), which share a
 * worker and the modules it loaded, never another caller's. `entry` is the built module's URL
 * (`./x.js` beside the caller).
 */
export function workerJobs<I, O>(entry: URL, limits: Pick<WorkerJobLimits, 'task' | 'maxMemoryMb'>): WorkerJobs<I, O> {
  let worker: Worker | undefined;
  let busy = false;
  const end = () => {
    void worker?.terminate();
    worker = undefined;
  };
  const start = () => {
    const started = new Worker(fromSource ? new URL(entry.href.replace(/\.js$/, '.ts')) : entry, {
      resourceLimits: { maxOldGenerationSizeMb: limits.maxMemoryMb },
      execArgv: [...inherited(), ...(fromSource ? ['--import', SOURCE_LOADER] : [])],
    });
    // What it throws between jobs (a rejection a job left behind) ends it; the next job starts another.
    started
      .on('error', () => {})
      .on('exit', () => {
        if (worker === started) worker = undefined;
      });
    return started;
  };
  return {
    run(input, { timeoutMs, signal }) {
      if (busy) return Promise.reject(new Error('one job at a time'));
      if (signal?.aborted) return Promise.reject(new Error('cancelled'));
      busy = true;
      worker ??= start();
      const current = worker;
      current.ref();
      return new Promise<O>((resolve, reject) => {
        let settled = false;
        const settle = (outcome: () => void, healthy = false) => {
          if (settled) return;
          settled = true;
          busy = false;
          link.dispose();
          current.off('message', onMessage).off('error', onError).off('exit', onExit);
          // Between jobs it does not keep the process alive.
          if (healthy) current.unref();
          else end();
          outcome();
        };
        const link = linkAbort(signal, timeoutMs, () =>
          settle(() =>
            reject(
              link.timedOut()
                ? new WorkerTimeoutError(`${limits.task} took longer than ${timeoutMs / 1000} s and was stopped`)
                : new Error('cancelled'),
            ),
          ),
        );
        const onMessage = (answer: Answer<O>) =>
          settle(() => (answer.ok ? resolve(answer.value) : reject(new Error(answer.message))), true);
        const onError = (error: Error & { code?: string }) =>
          settle(() =>
            reject(
              new Error(
                error.code === 'ERR_WORKER_OUT_OF_MEMORY'
                  ? `${limits.task} needed more than ${limits.maxMemoryMb} MB of memory and was stopped`
                  : `${limits.task} failed: ${messageOf(error)}`,
              ),
            ),
          );
        const onExit = (code: number) =>
          settle(() => reject(new Error(`${limits.task} ended without an answer (exit code ${code})`)));
        current.on('message', onMessage).on('error', onError).on('exit', onExit);
        current.postMessage(input);
      });
    },
    close: end,
  };
}

/**
 * Runs one job that the module at `entry` answers (with {@link answerJobs}) on `input`, in a
 * worker thread of its own, ended when the answer comes or a limit is reached. Rejects with the
 * job's own error message, a {@link WorkerTimeoutError}, or an Error naming the limit or failure.
 */
export async function runWorkerJob<I, O>(entry: URL, input: I, limits: WorkerJobLimits): Promise<O> {
  const jobs = workerJobs<I, O>(entry, limits);
  try {
    return await jobs.run(input, limits);
  } finally {
    jobs.close();
  }
}

/** In a worker's module: answers each job it is sent with `job`'s result or error. */
export function answerJobs<I, O>(job: (input: I) => O | Promise<O>): void {
  const port = parentPort;
  if (!port) throw new Error('answerJobs is for a worker thread');
  port.on('message', (input: I) => {
    Promise.resolve()
      .then(() => job(input))
      .then(
        (value) => port.postMessage({ ok: true, value } satisfies Answer<O>),
        (error: unknown) => port.postMessage({ ok: false, message: messageOf(error) } satisfies Answer<O>),
      );
  });
}
