import { type ChildProcess, spawn } from 'node:child_process';
import { chmod, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { PendingInput } from '@openmanus/core';
import { type RecordedRequest, startOpenAiServer } from '@openmanus/core/testing';
import { createDurableClient, type DurableClient, generateDecisionKey } from '@openmanus/durable';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Postgres, startPostgres } from '../../../packages/durable/test/postgres.js';
import { until } from '../../../packages/durable/test/until.js';
import { dist, runNode, tempDir } from './helpers.js';

let postgres: Postgres;
let databaseUrl: string;
let client: DurableClient | undefined;
const workers: WorkerProcess[] = [];
// The workers' decision key, given to every command through the environment with the URL (its
// password is kept off command lines).
const decisionKey = generateDecisionKey();
let durableEnv: Record<string, string> = {};

beforeAll(async () => {
  postgres = await startPostgres();
  databaseUrl = postgres.url('openmanus_cli');
  durableEnv = { OPENMANUS_DATABASE_URL: databaseUrl, OPENMANUS_DURABLE_KEY: decisionKey };
});
// A worker left running would take the next test's runs (with this test's model).
afterEach(async () => {
  for (const worker of workers) worker.child.kill('SIGKILL');
  await Promise.all(workers.splice(0).map((worker) => worker.exited));
});
afterAll(async () => {
  await client?.close();
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
function startCliWorker(
  workerId: string,
  workspace: string,
  env: Record<string, string>,
  options: readonly string[] = [],
): WorkerProcess {
  const child = spawn(
    process.execPath,
    [dist('cli.js'), 'worker', '--worker-id', workerId, '--workspace', workspace, ...options],
    {
      cwd: workspace,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...durableEnv, ...env },
      stdio: 'pipe',
    },
  );
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
  const worker = { child, ready, exited, stderr: () => stderr };
  workers.push(worker);
  return worker;
}

const computing = {
  content: 'Computing.',
  toolCalls: [{ name: 'python_execute', arguments: { code: 'print(6 * 7)' } }],
};
const answered = { content: 'The answer is 42.', toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] };
/** Model calls so far in the request's conversation: one per assistant message. */
const turnsDone = (request: RecordedRequest) => request.messages.filter((m) => m.role === 'assistant').length;
/** The task of the request's run (its first user message). */
const taskOf = (request: RecordedRequest) => String(request.messages.find((m) => m.role === 'user')?.content);

describe('openmanus worker and openmanus enqueue', () => {
  it('a queued task runs on a worker; enqueue follows it and prints the answer', async () => {
    const server = await startOpenAiServer({ script: [computing, answered] });
    const env = { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseURL };
    const worker = startCliWorker('cli-worker-1', await tempDir(), env);
    try {
      await worker.ready;
      const { code, stdout, stderr } = await runNode('cli.js', ['enqueue', '--agent', 'manus', 'What is 6*7?'], {
        env: { ...durableEnv, ...env },
      });
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
      const queued = await runNode('cli.js', ['enqueue', '--no-wait', '--run-id', 'cli-crash-run', 'What is 6*7?'], {
        env: { ...durableEnv, ...env },
      });
      expect(queued.code, queued.stderr).toBe(0);
      expect(queued.stdout).toBe('cli-crash-run\n');
      await held;
      first.child.kill('SIGKILL');
      expect(await first.exited).toBe('SIGKILL');

      const restarted = startCliWorker('cli-worker-2', workspace, env);
      await restarted.ready;
      // Enqueueing the same id again follows the run already there.
      const followed = await runNode('cli.js', ['enqueue', '--run-id', 'cli-crash-run', 'What is 6*7?'], {
        env: { ...durableEnv, ...env },
      });
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

/** `openmanus <command> <runId> …` against the file's database. */
const onRun = (command: string, args: readonly string[], env: Record<string, string> = {}) =>
  runNode('cli.js', [command, ...args], { env: { ...durableEnv, ...env } });

/** What the run waits for from a person, once its progress shows it (read by a client in this process). */
async function waitingFor(runId: string): Promise<PendingInput> {
  client ??= await createDurableClient({ databaseUrl, decisionKey, pollingIntervalMs: 100 });
  const durable = client;
  return until(async () => {
    const info = await durable.getRun(runId);
    return info?.status === 'running' ? info.progress?.pending[0] : undefined;
  }, `run ${runId} to wait for a person`);
}

const awaited = async (runId: string) => {
  client ??= await createDurableClient({ databaseUrl, decisionKey, pollingIntervalMs: 100 });
  return client.waitForRun(runId);
};

describe('openmanus status, approve, answer and cancel', () => {
  it('a worker with --approve waits; status shows the call, approve lets it run, --reject tells the model why', async () => {
    const server = await startOpenAiServer({
      script: (request: RecordedRequest) => (turnsDone(request) === 0 ? computing : answered),
    });
    const env = { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseURL };
    const worker = startCliWorker('cli-approver', await tempDir(), env, ['--approve', 'python_execute']);
    try {
      await worker.ready;
      expect(worker.stderr()).toContain('approval needed for python_execute');
      // One followed as it waits, one queued without waiting.
      const follower = onRun('enqueue', ['--run-id', 'cli-approved', 'task cli-approved'], env);
      const queued = await onRun('enqueue', ['--no-wait', '--run-id', 'cli-rejected', 'task cli-rejected'], env);
      expect(queued.code, queued.stderr).toBe(0);
      const pending = await waitingFor('cli-approved');
      await waitingFor('cli-rejected');

      const status = await onRun('status', ['cli-approved']);
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toMatch(
        /^Run cli-approved: running on cli-approver, step 1, 1 model calls, [\d,]+ in · [\d,]+ out · .+\n/,
      );
      expect(status.stdout).toContain(
        `Waiting for approval of python_execute(code: "print(6 * 7)") [${pending.effectId}]: openmanus approve cli-approved\n`,
      );

      const approved = await onRun('approve', ['cli-approved']);
      expect(approved.code, approved.stderr).toBe(0);
      expect(approved.stdout).toBe('Approved: python_execute(code: "print(6 * 7)")\n');
      const rejected = await onRun('approve', ['cli-rejected', '--reject', 'no Python today']);
      expect(rejected.code, rejected.stderr).toBe(0);
      expect(rejected.stdout).toBe('Rejected (no Python today): python_execute(code: "print(6 * 7)")\n');

      const followed = await follower;
      expect(followed.code, followed.stderr).toBe(0);
      expect(followed.stdout).toBe('The answer is 42.\n');
      expect(followed.stderr).toContain(
        '⏸ waiting for a person: openmanus status cli-approved, then openmanus approve cli-approved\n',
      );
      expect(await awaited('cli-rejected')).toMatchObject({ answer: 'The answer is 42.' });
      // The model read the tool's result after the approval, the reason after the rejection.
      const toolResultIn = (runId: string) =>
        String(
          server.requests
            .find((request) => taskOf(request) === `task ${runId}` && turnsDone(request) === 1)
            ?.messages.find((message) => message.role === 'tool')?.content,
        );
      expect(toolResultIn('cli-approved')).toContain('42');
      expect(toolResultIn('cli-rejected')).toContain('no Python today');

      const ended = await onRun('status', ['cli-approved']);
      expect(ended.stdout).toMatch(/^Run cli-approved: terminated on cli-approver after 2 step\(s\), 2 model calls/);
      expect(ended.stdout).toContain('Answer: The answer is 42.\n');
      const json = await onRun('status', ['cli-approved', '--json']);
      expect(JSON.parse(json.stdout)).toMatchObject({
        runId: 'cli-approved',
        status: 'ended',
        outcome: { status: 'finished', answer: 'The answer is 42.', usage: { llmCalls: 2 } },
      });
      expect(JSON.parse(json.stdout).outcome.state).toBeUndefined();
      const again = await onRun('approve', ['cli-approved']);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(
        /^openmanus approve: already decided: approved by \S+ at \S+; run "cli-approved" is not waiting for an approval \(it is ended\)\n$/,
      );
    } finally {
      await server.close();
    }
  });

  it('answer gives the question ask_human asked to the model', async () => {
    const server = await startOpenAiServer({
      script: (request: RecordedRequest) =>
        turnsDone(request) === 0
          ? { toolCalls: [{ name: 'ask_human', arguments: { inquire: 'Which city?' } }] }
          : { content: 'Off to Kyoto.', toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
    });
    const env = { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseURL };
    const worker = startCliWorker('cli-asker', await tempDir(), env);
    try {
      await worker.ready;
      await onRun('enqueue', ['--no-wait', '--run-id', 'cli-asked', 'Plan a trip'], env);
      const asked = await waitingFor('cli-asked');
      expect((await onRun('status', ['cli-asked'])).stdout).toContain(
        `Waiting for an answer to "Which city?" [${asked.effectId}]: openmanus answer cli-asked "…"\n`,
      );
      const empty = await onRun('answer', ['cli-asked', ' ']);
      expect(empty.code).toBe(1);
      expect(empty.stderr).toContain('the answer is empty');
      const missing = await onRun('answer', ['cli-asked']);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('expected <runId> "<text>", got 1 argument(s)');

      const answered = await onRun('answer', ['cli-asked', 'Kyoto']);
      expect(answered.code, answered.stderr).toBe(0);
      expect(answered.stdout).toBe('Answered "Which city?"\n');
      expect(await awaited('cli-asked')).toMatchObject({ answer: 'Off to Kyoto.' });
      const reply = server.requests[1]?.messages.find((message) => message.role === 'tool');
      expect(String(reply?.content)).toContain('Kyoto');
    } finally {
      await server.close();
    }
  });

  it('cancel stops a run on its worker; the follower and status say so; a worker stopped mid-call exits cleanly', async () => {
    let attempts = 0;
    let stalled: () => void = () => {};
    const stalls = () =>
      new Promise<void>((resolve) => {
        stalled = resolve;
      });
    let nextStall = stalls();
    const server = await startOpenAiServer({
      script: () => {
        attempts++;
        stalled();
        return { ...computing, stallAfter: 0 };
      },
    });
    const env = { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseURL };
    const workspace = await tempDir();
    try {
      const first = startCliWorker('cli-canceller', workspace, env);
      await first.ready;
      const follower = onRun('enqueue', ['--run-id', 'cli-cancelled', 'Wait'], env);
      await nextStall;
      // SIGTERM while the model call is in flight: the worker stops it and exits.
      nextStall = stalls();
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);

      const second = startCliWorker('cli-canceller', workspace, env);
      await second.ready;
      await nextStall;
      const cancelled = await onRun('cancel', ['cli-cancelled']);
      expect(cancelled.code, cancelled.stderr).toBe(0);
      expect(cancelled.stdout).toBe('Run cli-cancelled: cancelled\n');
      const followed = await follower;
      expect(followed.code).toBe(1);
      expect(followed.stderr).toContain('openmanus enqueue: the run cancelled: the run was cancelled');
      expect((await onRun('status', ['cli-cancelled'])).stdout).toBe('Run cli-cancelled: cancelled\n');

      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
      expect(attempts).toBe(2);
      const unknown = await onRun('cancel', ['cli-nobody']);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toBe('openmanus cancel: no run or flow has the id "cli-nobody"\n');
    } finally {
      await server.close();
    }
  });
});

describe('durable planning flows from the CLI', () => {
  const plan = {
    toolCalls: [
      { name: 'planning', arguments: { command: 'create', plan_id: 'p', title: 'Multiply', steps: ['Compute 6*7'] } },
    ],
  };

  it('enqueue --flow runs the planning flow on a worker, each step a run; status and cancel take its id', async () => {
    const server = await startOpenAiServer({ script: [plan, computing, answered, { content: '6*7 is 42.' }] });
    const env = { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseURL };
    const worker = startCliWorker('cli-flow-worker', await tempDir(), env);
    try {
      await worker.ready;
      const { code, stdout, stderr } = await onRun('enqueue', ['--flow', '--run-id', 'cli-flow', 'What is 6*7?'], env);
      expect(code, stderr).toBe(0);
      expect(stdout).toBe('Plan completed:\n\n6*7 is 42.\n');
      expect(stderr).toMatch(/^Flow cli-flow queued\n/);
      // The step's run, led by its step: the plan's first step, on manus, a run of its own.
      expect(stderr).toMatch(/▸ step 0 \[manus\] cli-flow\/[\w-]+\n/);
      expect(stderr).toContain('→ python_execute(code: "print(6 * 7)")');
      expect(stderr).toContain('← 42');
      expect(stderr).toContain('Progress: 1/1 steps completed (100%)');
      expect(server.requests).toHaveLength(4);

      const status = await onRun('status', ['cli-flow']);
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toMatch(/^Flow cli-flow: completed on cli-flow-worker, 4 model calls/);
      expect(status.stdout).toContain('  0. [✓] Compute 6*7');
      expect(status.stdout).toContain('Summary: Plan completed:');
      // A flow's id serves the run commands only while a step's run is in flight.
      const answer = await onRun('answer', ['cli-flow', 'yes']);
      expect(answer.code).toBe(1);
      expect(answer.stderr).toBe('openmanus answer: flow "cli-flow" has no step in flight (it is ended)\n');
      // Cancelling a flow that has ended leaves it as it ended.
      const cancelled = await onRun('cancel', ['cli-flow']);
      expect(cancelled.code, cancelled.stderr).toBe(0);
      expect(cancelled.stdout).toMatch(/^Flow cli-flow: completed/);

      const mixed = await onRun('enqueue', ['--flow', '--agent', 'manus', 'x'], env);
      expect(mixed.code).toBe(2);
      expect(mixed.stderr).toContain('--flow and --agent do not go together');
    } finally {
      await server.close();
    }
  });

  it('a flow whose step waits for a person: the follower says so with the flow’s id, which approve takes', async () => {
    const server = await startOpenAiServer({ script: [plan, computing, answered, { content: '6*7 is 42.' }] });
    const env = { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseURL };
    const worker = startCliWorker('cli-flow-approver', await tempDir(), env, ['--approve', 'python_execute']);
    try {
      await worker.ready;
      const follower = onRun('enqueue', ['--flow', '--run-id', 'cli-flow-approved', 'What is 6*7?'], env);
      client ??= await createDurableClient({ databaseUrl, decisionKey, pollingIntervalMs: 100 });
      const durable = client;
      await until(async () => {
        const flow = await durable.getFlow('cli-flow-approved');
        const step = flow?.status === 'running' ? flow.progress?.runId : undefined;
        const info = step ? await durable.getRun(step) : undefined;
        return info?.status === 'running' ? info.progress?.pending[0] : undefined;
      }, 'the flow’s step to wait for an approval');
      // Nothing to answer: the step waits for an approval, not for an answer.
      const answer = await onRun('answer', ['cli-flow-approved', 'yes']);
      expect(answer.code).toBe(1);
      expect(answer.stderr).toMatch(/^openmanus answer: run "cli-flow-approved\/[\w-]+" is not waiting for an answer/);

      const approved = await onRun('approve', ['cli-flow-approved']);
      expect(approved.code, approved.stderr).toBe(0);
      expect(approved.stdout).toBe('Approved: python_execute(code: "print(6 * 7)")\n');
      const followed = await follower;
      expect(followed.code, followed.stderr).toBe(0);
      expect(followed.stdout).toBe('Plan completed:\n\n6*7 is 42.\n');
      expect(followed.stderr).toContain(
        '⏸ waiting for a person: openmanus status cli-flow-approved, then openmanus approve cli-flow-approved\n',
      );
      expect(followed.stderr).toContain('← 42');

      const again = await onRun('approve', ['cli-flow-approved']);
      expect(again.code).toBe(1);
      expect(again.stderr).toBe('openmanus approve: flow "cli-flow-approved" has no step in flight (it is ended)\n');
    } finally {
      await server.close();
    }
  });
});

describe('decisions need the workers\u2019 key; the database URL stays off command lines', () => {
  it('approve without the key or with another is refused; of an approve and a reject at once one wins, the other is told', async () => {
    const server = await startOpenAiServer({
      script: (request: RecordedRequest) => (turnsDone(request) === 0 ? computing : answered),
    });
    const env = { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseURL };
    const home = await tempDir();
    const worker = startCliWorker('cli-guarded', await tempDir(), env, ['--approve', 'python_execute']);
    try {
      await worker.ready;
      await onRun('enqueue', ['--no-wait', '--run-id', 'cli-guarded', 'task cli-guarded'], env);
      await waitingFor('cli-guarded');

      // Another local user with the database's URL (or with none of the workers' secrets).
      const keyless = await runNode('cli.js', ['approve', 'cli-guarded'], {
        env: { OPENMANUS_DATABASE_URL: databaseUrl, HOME: home },
      });
      expect(keyless.code).toBe(1);
      expect(keyless.stderr).toContain('openmanus approve: deciding for a run needs the workers\u2019 decision key');
      const cancelled = await runNode('cli.js', ['cancel', 'cli-guarded'], {
        env: { OPENMANUS_DATABASE_URL: databaseUrl, HOME: home },
      });
      expect(cancelled.code).toBe(1);
      const otherKey = await onRun('approve', ['cli-guarded'], { OPENMANUS_DURABLE_KEY: generateDecisionKey() });
      expect(otherKey.code).toBe(1);
      expect(otherKey.stderr).toContain('this decision key is not the workers\u2019');
      expect((await onRun('status', ['cli-guarded'])).stdout).toContain('Waiting for approval of python_execute');

      const [approve, reject] = await Promise.all([
        onRun('approve', ['cli-guarded']),
        onRun('approve', ['cli-guarded', '--reject', 'not now']),
      ]);
      expect([approve.code, reject.code].sort()).toEqual([0, 1]);
      const loser = approve.code === 0 ? reject : approve;
      // Told while the run still waited for it, or just after the worker took the first.
      expect(loser.stderr).toMatch(
        approve.code === 0
          ? /^openmanus approve: already decided: approved by \S+ at \S+(; run "cli-guarded" is not waiting .*)?\n$/
          : /^openmanus approve: already decided: rejected \("not now"\) by \S+ at \S+(; run "cli-guarded" is not waiting .*)?\n$/,
      );
      const outcome = await awaited('cli-guarded');
      expect(outcome.status).toBe('finished');
      const toolResult = String(
        server.requests.find((request) => turnsDone(request) === 1)?.messages.find((m) => m.role === 'tool')?.content,
      );
      expect(toolResult).toContain(approve.code === 0 ? '42' : 'not now');
    } finally {
      await server.close();
      await rm(home, { recursive: true, force: true });
    }
  });

  it('a worker makes its key file on first use (0600); a key file others can read is refused', async () => {
    const home = await tempDir();
    const keyFile = join(home, '.openmanus', 'durable.key');
    try {
      const env = { OPENAI_API_KEY: 'sk-test', HOME: home, OPENMANUS_DURABLE_KEY: '' };
      const worker = startCliWorker('cli-keymaker', await tempDir(), env);
      await worker.ready;
      expect(worker.stderr()).toContain(`created the decision key file ${keyFile} (0600)`);
      expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
      expect((await stat(join(home, '.openmanus'))).mode & 0o777).toBe(0o700);
      worker.child.kill('SIGTERM');
      expect(await worker.exited).toBe(0);

      await chmod(keyFile, 0o644);
      const exposed = startCliWorker('cli-keymaker', await tempDir(), env);
      await expect(exposed.ready).rejects.toThrow('exited (2)');
      expect(await exposed.exited).toBe(2);
      expect(exposed.stderr()).toContain(`is readable by others: chmod 600 ${keyFile}`);
      const client = await runNode('cli.js', ['approve', 'cli-nobody', '--key-file', keyFile], {
        env: { OPENMANUS_DATABASE_URL: databaseUrl },
      });
      expect(client.code).toBe(2);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });

  it('a password in --database-url draws a warning; the environment and --database-url-file do not', async () => {
    const dir = await tempDir();
    try {
      const onCommandLine = await runNode('cli.js', ['status', 'cli-nobody', '--database-url', databaseUrl]);
      expect(onCommandLine.code).toBe(1);
      expect(onCommandLine.stderr).toContain(
        'openmanus: warning: the password in --database-url is readable by every local user (/proc/<pid>/cmdline)',
      );
      const urlFile = join(dir, 'database-url');
      await writeFile(urlFile, `${databaseUrl}\n`, { mode: 0o600 });
      for (const ran of [
        await runNode('cli.js', ['status', 'cli-nobody', '--database-url-file', urlFile]),
        await runNode('cli.js', ['status', 'cli-nobody'], { env: { OPENMANUS_DATABASE_URL: databaseUrl } }),
      ]) {
        expect(ran.code).toBe(1);
        expect(ran.stderr).toBe('openmanus status: no run or flow has the id "cli-nobody"\n');
      }
      await chmod(urlFile, 0o640);
      const exposed = await runNode('cli.js', ['status', 'cli-nobody', '--database-url-file', urlFile]);
      expect(exposed.code).toBe(2);
      expect(exposed.stderr).toContain('is readable by others');
      // A bad URL is named without its password.
      const bad = await runNode('cli.js', ['status', 'x'], {
        env: { OPENMANUS_DATABASE_URL: 'mysql://u:hunter2@h/d' },
      });
      expect(bad.code).toBe(2);
      expect(bad.stderr).not.toContain('hunter2');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
