import { type ChildProcess, spawn } from 'node:child_process';
import { type RecordedRequest, startOpenAiServer } from '@openmanus/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Postgres, startPostgres } from '../../../packages/durable/test/postgres.js';
import { dist, runNode, tempDir } from './helpers.js';

let postgres: Postgres;
let databaseUrl: string;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  postgres = await startPostgres();
  databaseUrl = postgres.url('openmanus_cli');
});
afterAll(async () => {
  for (const worker of workers) worker.kill('SIGKILL');
  await postgres?.stop();
});

interface WorkerProcess {
  readonly child: ChildProcess;
  /** Resolves once the worker says it is ready; rejects if it exits first. */
  readonly ready: Promise<void>;
  /** The exit code, or the signal that ended it. */
  readonly exited: Promise<number | string>;
  readonly stderr: () => string;
}

/** `openmanus worker` as a child process, pointed at the scripted model through the environment. */
function startCliWorker(workerId: string, workspace: string, env: Record<string, string>): WorkerProcess {
  const child = spawn(
    process.execPath,
    [dist('cli.js'), 'worker', '--database-url', databaseUrl, '--worker-id', workerId, '--workspace', workspace],
    { cwd: workspace, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...env }, stdio: 'pipe' },
  );
  workers.push(child);
  let stderr = '';
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? code ?? -1)),
  );
  const ready = new Promise<void>((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      if (stderr.includes(': ready')) resolve();
    });
    void exited.then((how) => reject(new Error(`worker ${workerId} exited (${how}) before it was ready:\n${stderr}`)));
  });
  return { child, ready, exited, stderr: () => stderr };
}

const computing = {
  content: 'Computing.',
  toolCalls: [{ name: 'python_execute', arguments: { code: 'print(6 * 7)' } }],
};
const answered = { content: 'The answer is 42.', toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] };
/** Model calls so far in the request's conversation: one per assistant message. */
const turnsDone = (request: RecordedRequest) => request.messages.filter((m) => m.role === 'assistant').length;

describe('openmanus worker and openmanus enqueue', () => {
  it('a queued task runs on a worker; enqueue follows it and prints the answer', async () => {
    const server = await startOpenAiServer({ script: [computing, answered] });
    const env = { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseURL };
    const worker = startCliWorker('cli-worker-1', await tempDir(), env);
    try {
      await worker.ready;
      const { code, stdout, stderr } = await runNode(
        'cli.js',
        ['enqueue', '--database-url', databaseUrl, '--agent', 'manus', 'What is 6*7?'],
        { env },
      );
      expect(code, stderr).toBe(0);
      expect(stdout).toBe('The answer is 42.\n');
      expect(stderr).toMatch(/^Run [\w-]+ queued for manus/);
      expect(stderr).toContain('→ python_execute(code: "print(6 * 7)")');
      expect(stderr).toContain('← 42');
      expect(stderr).toMatch(/■ terminated after 2 step\(s\), 2 model calls/);
      expect(server.requests).toHaveLength(2);

      worker.child.kill('SIGTERM');
      expect(await worker.exited).toBe(0);
      expect(worker.stderr()).toContain('SIGTERM, stopping');
    } finally {
      await server.close();
    }
  });

  it('--no-wait prints the run id; a worker killed mid-run and restarted finishes the run', async () => {
    let holding = true;
    let hold: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      hold = resolve;
    });
    const server = await startOpenAiServer({
      script: (request: RecordedRequest) => {
        if (turnsDone(request) === 0) return computing;
        // The second model call never answers the first time: the worker is killed meanwhile.
        if (holding) {
          holding = false;
          hold();
          return { ...answered, stallAfter: 0 };
        }
        return answered;
      },
    });
    const env = { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseURL };
    const workspace = await tempDir();
    try {
      const first = startCliWorker('cli-worker-2', workspace, env);
      await first.ready;
      const queued = await runNode(
        'cli.js',
        ['enqueue', '--database-url', databaseUrl, '--no-wait', '--run-id', 'cli-crash-run', 'What is 6*7?'],
        { env },
      );
      expect(queued.code, queued.stderr).toBe(0);
      expect(queued.stdout).toBe('cli-crash-run\n');
      await held;
      first.child.kill('SIGKILL');
      expect(await first.exited).toBe('SIGKILL');

      const restarted = startCliWorker('cli-worker-2', workspace, env);
      await restarted.ready;
      // Enqueueing the same id again follows the run already there.
      const followed = await runNode(
        'cli.js',
        ['enqueue', '--database-url', databaseUrl, '--run-id', 'cli-crash-run', 'What is 6*7?'],
        { env },
      );
      expect(followed.code, followed.stderr).toBe(0);
      expect(followed.stdout).toBe('The answer is 42.\n');
      // The python step completed before the crash is read back, not run again: 1 + 2 model calls.
      expect(server.requests.map(turnsDone)).toEqual([0, 1, 1]);
      restarted.child.kill('SIGTERM');
      expect(await restarted.exited).toBe(0);
    } finally {
      await server.close();
    }
  });

  it('refuses bad options with exit code 2', async () => {
    const noUrl = await runNode('cli.js', ['worker']);
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toContain('--database-url is required');
    const badAgent = await runNode('cli.js', ['enqueue', '--database-url', databaseUrl, '--agent', 'nobody', 'x']);
    expect(badAgent.code).toBe(2);
    expect(badAgent.stderr).toContain('--agent must be one of');
    const badConcurrency = await runNode('cli.js', ['worker', '--database-url', databaseUrl, '--concurrency', '0']);
    expect(badConcurrency.code).toBe(2);
  });
});
