// Pages are read — parsed, their article found, made Markdown or text — in a worker thread: a
// page is untrusted input, and the work it makes (megabytes of markup, deep nesting) must not
// stall the host's event loop or outlast the time limit of the call that fetched it.
import type { ReadablePage } from './markdown.js';
import { runWorkerJob } from './workerJob.js';

export type PageJob =
  | { readonly kind: 'markdown'; readonly html: string; readonly url: string }
  | { readonly kind: 'text'; readonly html: string };

type PageOf<J extends PageJob> = J extends { kind: 'markdown' } ? ReadablePage : string;

export interface PageReadLimits {
  /** Default 30 s; then the reading is stopped and the promise rejects (a WorkerTimeoutError). */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/** Heap a page's reading may use: a 5 MB page is a DOM of a few hundred megabytes. */
const MAX_MEMORY_MB = 1024;

export function readPageOffThread<J extends PageJob>(job: J, limits: PageReadLimits): Promise<PageOf<J>> {
  return runWorkerJob(new URL('./pageWorker.js', import.meta.url), job, {
    task: 'reading the page',
    timeoutMs: limits.timeoutMs ?? 30_000,
    maxMemoryMb: MAX_MEMORY_MB,
    ...(limits.signal ? { signal: limits.signal } : {}),
  });
}
