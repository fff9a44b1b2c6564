// A job run in a worker thread of its own, so that whatever the job does with untrusted input —
// a loop that does not end, memory it keeps taking, a promise rejected that nobody awaits —
// stays in the worker: the host's event loop keeps running, the time limit holds (the worker is
// terminated), and the caller gets an Error that says what happened.
import { parentPort, Worker, workerData } from 'node:worker_threads';
import { linkAbort, messageOf } from '@openmanus/core';
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
export class WorkerTimeoutError extends Error {
  override readonly name = 'WorkerTimeoutError';
}

type Answer<O> = { readonly ok: true; readonly value: O } | { readonly ok: false; readonly message: string };

// Run from the sources (the package's tests), the worker's module is TypeScript too.
const fromSource = import.meta.url.endsWith('.ts');

/** This process's Node options (e.g. a loader it runs with), but those only a main script takes. */
const inherited = () => process.execArgv.filter((option) => !option.startsWith('--input-type'));

/**
 * Runs the job that the module at `entry` answers (with {@link answerJob}) on `input`, in a new
 * worker thread, ended when the answer comes or a limit is reached. Rejects with the job's own
 * error message, a {@link WorkerTimeoutError}, or an Error naming the limit or failure.
 * `entry` is the built module's URL (`./x.js` beside the caller).
 */
export function runWorkerJob<I, O>(entry: URL, input: I, limits: WorkerJobLimits): Promise<O> {
  if (limits.signal?.aborted) return Promise.reject(new Error('cancelled'));
  const worker = new Worker(fromSource ? new URL(entry.href.replace(/\.js$/, '.ts')) : entry, {
    workerData: input,
    resourceLimits: { maxOldGenerationSizeMb: limits.maxMemoryMb },
    execArgv: [...inherited(), ...(fromSource ? ['--import', SOURCE_LOADER] : [])],
  });
  return new Promise<O>((resolve, reject) => {
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      link.dispose();
      void worker.terminate();
      outcome();
    };
    const link = linkAbort(limits.signal, limits.timeoutMs, () =>
      settle(() =>
        reject(
          link.timedOut()
            ? new WorkerTimeoutError(`${limits.task} took longer than ${limits.timeoutMs / 1000} s and was stopped`)
            : new Error('cancelled'),
        ),
      ),
    );
    worker.on('message', (answer: Answer<O>) =>
      settle(() => (answer.ok ? resolve(answer.value) : reject(new Error(answer.message)))),
    );
    // Kept until the worker is gone: whatever it throws after answering is ignored here.
    worker.on('error', (error: Error & { code?: string }) =>
      settle(() =>
        reject(
          new Error(
            error.code === 'ERR_WORKER_OUT_OF_MEMORY'
              ? `${limits.task} needed more than ${limits.maxMemoryMb} MB of memory and was stopped`
              : `${limits.task} failed: ${messageOf(error)}`,
          ),
        ),
      ),
    );
    worker.on('exit', (code) =>
      settle(() => reject(new Error(`${limits.task} ended without an answer (exit code ${code})`))),
    );
  });
}

/** In a worker's module: answers the job it was started for with `job`'s result or error. */
export function answerJob<I, O>(job: (input: I) => O | Promise<O>): void {
  const port = parentPort;
  if (!port) throw new Error('answerJob is for a worker thread');
  const answer = (message: Answer<O>) => port.postMessage(message);
  Promise.resolve()
    .then(() => job(workerData as I))
    .then(
      (value) => answer({ ok: true, value }),
      (error: unknown) => answer({ ok: false, message: messageOf(error) }),
    );
}
