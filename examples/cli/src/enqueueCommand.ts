import { parseArgs } from 'node:util';
import { messageOf } from '@openmanus/core';
import type { DurableClient } from '@openmanus/durable';
import { AGENT_NAMES, isAgentName } from './agents.js';
import { databaseUrlOption, withDurableClient } from './durableOptions.js';
import { failure } from './options.js';
import { paint, runLines } from './progress.js';
import { runEventLines } from './runEventLines.js';
import { readTask, reportOutcome, type SessionIo, useColor } from './session.js';

export const enqueueUsage = `Usage: openmanus enqueue --database-url <url> [options] [task...]

Puts a run of an agent on the durable queue, for whichever \`openmanus worker\` takes it, then
follows it: its progress on stderr, the answer on stdout, the exit code as \`openmanus\`'s.
Ctrl+C stops following; the run goes on. Without a task, asks for one.

Options:
  --database-url <url>  the workers' Postgres database (default: $OPENMANUS_DATABASE_URL)
  --agent <name>        ${AGENT_NAMES.join(', ')} (default manus)
  -p, --prompt <task>   the task (the same as giving it as arguments)
  --run-id <id>         the run's id (default: a new UUID); enqueueing an id again follows the
                        run already there
  --app-version <v>     only workers of this version take the run (default: the newest)
  --no-wait             print the run's id and exit without following it
  -h, --help            show this help`;

const parseArguments = (args: string[]) =>
  parseArgs({
    args,
    allowPositionals: true,
    options: {
      'database-url': { type: 'string' },
      agent: { type: 'string', default: 'manus' },
      prompt: { type: 'string', short: 'p' },
      'run-id': { type: 'string' },
      'app-version': { type: 'string' },
      'no-wait': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });

/** `openmanus enqueue`: queues a durable run and, unless --no-wait, follows it to its end. */
export async function enqueueCommand(argv: string[], io: SessionIo): Promise<number> {
  const fail = failure(io, 'openmanus enqueue');
  let parsed: ReturnType<typeof parseArguments>;
  try {
    parsed = parseArguments(argv);
  } catch (error) {
    return fail(`${messageOf(error)}\n\n${enqueueUsage}`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout.write(`${enqueueUsage}\n`);
    return 0;
  }
  const agent = values.agent;
  if (!isAgentName(agent)) return fail(`--agent must be one of ${AGENT_NAMES.join(', ')}, got "${agent}"`);
  const databaseUrl = databaseUrlOption(values['database-url'], io);
  if (!databaseUrl.ok) return fail(databaseUrl.error);
  const task = values.prompt !== undefined ? values.prompt.trim() : await readTask(positionals, io);
  if (!task) return fail('the task is empty: give one as an argument, or type it at the prompt.');

  const version = values['app-version'] ? { applicationVersion: values['app-version'] } : {};
  return withDurableClient(
    io,
    'openmanus enqueue',
    databaseUrl.value,
    async (client) => {
      const runId = await client.enqueueRun({
        agent,
        input: task,
        ...(values['run-id'] ? { runId: values['run-id'] } : {}),
      });
      if (values['no-wait']) {
        io.stdout.write(`${runId}\n`);
        return 0;
      }
      io.stderr.write(`Run ${runId} queued for ${agent}\n`);
      return follow(client, runId, io);
    },
    { pollingIntervalMs: 200, ...version },
  );
}

/** Prints the run's transitions as they happen, then its answer; returns the exit code of its outcome. */
async function follow(client: DurableClient, runId: string, io: SessionIo): Promise<number> {
  const color = useColor(io.stderr, io.env);
  for await (const item of client.streamEvents(runId)) {
    for (const line of runEventLines(item, color)) io.stderr.write(`${line}\n`);
    if (item.status === 'awaiting_approval' || item.status === 'awaiting_human')
      io.stderr.write(
        `${paint(color, 33)('  ⏸ waiting for a person:')} openmanus status ${runId}, then openmanus ${item.status === 'awaiting_approval' ? 'approve' : 'answer'} ${runId}\n`,
      );
  }
  const info = await client.getRun(runId);
  if (info && (info.status === 'errored' || info.status === 'cancelled')) {
    return failure(io, 'openmanus enqueue')(`the run ${info.status}: ${info.error}`, 1);
  }
  const outcome = await client.waitForRun(runId);
  io.stderr.write(`${runLines(color).finished(outcome)}\n`);
  if (outcome.answer) io.stdout.write(`${outcome.answer}\n`);
  return reportOutcome(outcome, io, false, 'openmanus enqueue');
}
