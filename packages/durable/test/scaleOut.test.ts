import type { RecordedRequest } from '@openmanus/core/testing';
import { describe, expect, it } from 'vitest';
import { durableHarness } from './harness.js';
import { noteReply, taskOf, turnsDone } from './scriptedNotes.js';

const harness = durableHarness();

describe('a deploy: every worker stopped mid-run, a new one started with the same version', () => {
  it.each(['SIGTERM', 'SIGKILL'] as const)(
    'after %s, a worker of another version leaves the runs alone; one of the same version finishes them, no recorded step run again',
    async (signal) => {
      const log = await harness.toolLog(`deploy-${signal}`);
      // Each run's third model call never answers the first time: every run is mid-way, its
      // worker waiting on the model, when the workers stop.
      const stalled = new Set<string>();
      let allStalled: () => void = () => {};
      const stalling = new Promise<void>((resolve) => {
        allStalled = resolve;
      });
      const server = await harness.server({
        script: (request: RecordedRequest) => {
          const reply = noteReply(request, 3);
          const task = taskOf(request);
          if (turnsDone(request) !== 2 || stalled.has(task) || task === 'say done') return reply;
          stalled.add(task);
          if (stalled.size === 4) allStalled();
          return { ...reply, stallAfter: 0 };
        },
      });
      const oldIds = [`old-a-${signal}`, `old-b-${signal}`];
      const old = oldIds.map((id) => harness.worker(id, server.baseURL, log, { concurrency: 2 }));
      await Promise.all(old.map((worker) => worker.ready));
      const durable = await harness.client();
      const runIds = await Promise.all(
        [0, 1, 2, 3].map((i) =>
          durable.enqueueRun({
            runId: `deploy-${signal}-${i}`,
            agent: 'recorder',
            input: `task deploy-${signal}-${i}`,
          }),
        ),
      );
      await stalling;
      for (const worker of old) worker.child.kill(signal);
      expect(await Promise.all(old.map((worker) => worker.exited))).toEqual(
        signal === 'SIGTERM' ? ['exit 0', 'exit 0'] : ['SIGKILL', 'SIGKILL'],
      );
      const stoppedAt = server.requests.length;

      // A worker of a new version takes new runs (of its version) but none of these.
      const newVersion = harness.worker(`new-version-${signal}`, server.baseURL, log, { applicationVersion: 'test-2' });
      await newVersion.ready;
      const other = await harness.client('test-2');
      const otherRun = await other.enqueueRun({ agent: 'recorder', input: 'say done' });
      expect(await other.waitForRun(otherRun)).toMatchObject({ status: 'finished' });
      for (const runId of runIds) {
        const info = await durable.getRun(runId);
        expect(info?.status).toBe('running');
        expect(oldIds).toContain((info as { workerId: string }).workerId);
      }
      // It sent the model its own run's calls only.
      expect(new Set(server.requests.slice(stoppedAt).map(taskOf))).toEqual(new Set(['say done']));

      // A worker of the same version (a new id, as after a deploy) finishes them.
      await harness.worker(`new-${signal}`, server.baseURL, log).ready;
      const outcomes = await Promise.all(runIds.map((runId) => durable.waitForRun(runId)));
      expect(outcomes.map((outcome) => outcome.answer)).toEqual(runIds.map(() => 'done'));
      const executions = await harness.executions(log);
      for (const runId of runIds) {
        expect(await harness.parts(runId)).toEqual([
          {
            id: runId,
            status: 'SUCCESS',
            steps: ['llm-1', 'running-1-0', 'llm-2', 'running-2-0', 'llm-3', 'running-3-0', 'llm-4'],
          },
        ]);
        // Only the model call each run had in flight when its worker stopped was sent again.
        const calls = server.requests.filter((request) => taskOf(request) === `task ${runId}`).map(turnsDone);
        expect(calls).toEqual([0, 1, 2, 2, 3]);
        expect(executions.filter((line) => line.startsWith(`${runId} `))).toEqual(
          [1, 2, 3].map((turn) => `${runId} running-${turn}-0`),
        );
      }
    },
  );
});

describe('two workers on one queue', () => {
  it('each does a fair share of the runs: neither starves', async () => {
    const log = await harness.toolLog('fair');
    const server = await harness.server({
      script: (request: RecordedRequest) => ({ ...noteReply(request, 2), delayMs: 50 }),
    });
    const workers = ['fair-a', 'fair-b'].map((id) => harness.worker(id, server.baseURL, log, { concurrency: 2 }));
    await Promise.all(workers.map((worker) => worker.ready));
    const durable = await harness.client();
    const runIds = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        durable.enqueueRun({ runId: `fair-${i}`, agent: 'recorder', input: `task fair-${i}` }),
      ),
    );
    for (const runId of runIds) expect(await durable.waitForRun(runId)).toMatchObject({ answer: 'done' });

    // Two at a time each: a worker that ran 4 or more runs came back to the queue while the other worked.
    const runsBy = new Map<string, number>();
    for (const runId of runIds) {
      const { workerId } = (await durable.getRun(runId)) as { workerId: string };
      runsBy.set(workerId, (runsBy.get(workerId) ?? 0) + 1);
    }
    expect([...runsBy.keys()].sort()).toEqual(['fair-a', 'fair-b']);
    for (const count of runsBy.values()) expect(count).toBeGreaterThanOrEqual(4);
    // The tools' executions agree: by the worker that ran each, 2 per run, none twice.
    const lines = await harness.lines(log);
    expect(new Set(lines.map((line) => line.split(' ').slice(0, 2).join(' '))).size).toBe(24);
    for (const [workerId, count] of runsBy)
      expect(lines.filter((line) => line.endsWith(` ${workerId}`))).toHaveLength(2 * count);
  });
});
