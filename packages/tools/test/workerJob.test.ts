import { describe, expect, it } from 'vitest';
import { runWorkerJob, WorkerTimeoutError, workerJobs } from '../src/web/workerJob.js';
import { whileTicking } from './ticking.js';

const job = (name: string) => new URL(`./fixtures/jobs/${name}.js`, import.meta.url);
const limits = { task: 'the test job', timeoutMs: 600_000, maxMemoryMb: 256 };

describe('a job in a worker thread', () => {
  it("answers with the job's result, or rejects with its error", async () => {
    expect(await runWorkerJob(job('echo'), { text: 'hi' }, limits)).toMatchObject({ echoed: 'hi' });
    await expect(runWorkerJob(job('echo'), { text: 'hi', fail: true }, limits)).rejects.toThrow('no: hi');
  });

  it('stops a job that never ends at its time limit, and this thread keeps running meanwhile', async () => {
    // The job never ends: any time limit is reached, however fast the machine.
    const { value, ticks } = await whileTicking(() =>
      runWorkerJob(job('spin'), {}, { ...limits, timeoutMs: 1000 }).catch((error: unknown) => error),
    );
    expect(value).toBeInstanceOf(WorkerTimeoutError);
    expect((value as Error).message).toBe('the test job took longer than 1 s and was stopped');
    expect(ticks).toBeGreaterThan(0);
  });

  it('stops a job that takes all the memory it can, with an error that says so', async () => {
    await expect(runWorkerJob(job('hoard'), {}, { ...limits, maxMemoryMb: 64 })).rejects.toThrow(
      'the test job needed more than 64 MB of memory and was stopped',
    );
  });

  it('keeps a rejection nobody handled in the worker: the job fails, this process does not', async () => {
    // vitest fails a run in which a rejection reaches this process unhandled.
    await expect(runWorkerJob(job('stray'), {}, limits)).rejects.toThrow(
      'the test job failed: a rejection nobody handled',
    );
  });

  it('stops the job when its signal aborts, before it starts too', async () => {
    const controller = new AbortController();
    const running = runWorkerJob(job('spin'), {}, { ...limits, signal: controller.signal });
    controller.abort();
    await expect(running).rejects.toThrow('cancelled');
    await expect(runWorkerJob(job('spin'), {}, { ...limits, signal: controller.signal })).rejects.toThrow('cancelled');
  });

  it('runs a batch of jobs in one worker; one that is stopped ends it, and the next gets a new one', async () => {
    const jobs = workerJobs<{ text: string; fail?: boolean; spin?: boolean }, { thread: number }>(job('echo'), limits);
    try {
      const first = await jobs.run({ text: 'a' }, limits);
      await expect(jobs.run({ text: 'b', fail: true }, limits)).rejects.toThrow('no: b');
      expect((await jobs.run({ text: 'c' }, limits)).thread).toBe(first.thread);
      await expect(jobs.run({ text: 'd', spin: true }, { timeoutMs: 1000 })).rejects.toThrow(WorkerTimeoutError);
      expect((await jobs.run({ text: 'e' }, limits)).thread).not.toBe(first.thread);
    } finally {
      jobs.close();
    }
  });
});
