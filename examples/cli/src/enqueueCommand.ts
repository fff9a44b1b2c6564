import { parseArgs } from 'node:util';
import { messageOf } from '@openmanus/core';
import type { DurableClient } from '@openmanus/durable';
import { AGENT_NAMES, isAgentName } from './agents.js';
import { DURABLE_FLOW, databaseUrlOption, durableArgs, durableUsage, withConnectedClient } from './durableOptions.js';
import { reportFlowOutcome } from './flowCommand.js';
import { failure } from './options.js';
import { planView } from './planView.js';
import { paint, runLines } from './progress.js';
import { runEventLines } from './runEventLines.js';
import { readTask, reportOutcome, type SessionIo, useColor } from './session.js';

export const enqueueUsage = `Usage: openmanus enqueue [options] [task...]

Puts a run of an agent on the durable queue, for whichever \`openmanus worker\` takes it, then
follows it: its progress on stderr, the answer on stdout, the exit code as \`openmanus\`'s.
With --flow, queues the task as a planning flow (as \`openmanus flow\`, run by the workers: each
step a run of its own), follows its steps' runs, then prints the plan and the summary.
Ctrl+C stops following; the run goes on. Without a task, asks for one.

Options:
${durableUsage}
  --agent <name>        ${AGENT_NAMES.join(', ')} (default manus)
  --flow                a planning flow instead of one agent's run (exit codes as \`openmanus flow\`)
  -p, --prompt <task>   the task (the same as giving it as arguments)
  --run-id <id>         the run's (or flow's) id (default: a new UUID); enqueueing an id again
                        follows the one already there
  --app-version <v>     only workers of this version take the run (default: the newest)
  --no-wait             print the run's id and exit without following it
  -h, --help            show this help`;

const parseArguments = (args: string[]) =>
  parseArgs({
    args,
    allowPositionals: true,
    options: {
      ...durableArgs,
      agent: { type: 'string' },
      flow: { type: 'boolean', default: false },
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
  if (values.flow && values.agent !== undefined)
    return fail('--flow and --agent do not go together: a flow has its own agents');
  const agent = values.agent ?? 'manus';
  if (!isAgentName(agent)) return fail(`--agent must be one of ${AGENT_NAMES.join(', ')}, got "${agent}"`);
  // Enqueueing decides nothing: no key is read.
  const databaseUrl = databaseUrlOption(values, io);
  if (!databaseUrl.isOk()) return fail(databaseUrl.error);
  const task = values.prompt !== undefined ? values.prompt.trim() : await readTask(positionals, io);
  if (!task) return fail('the task is empty: give one as an argument, or type it at the prompt.');

  const version = values['app-version'] ? { applicationVersion: values['app-version'] } : {};
  return withConnectedClient(
    io,
    'openmanus enqueue',
    { databaseUrl: databaseUrl.value },
    async (client) => {
      if (values.flow) {
        const flowId = await client.enqueueFlow({
          flow: DURABLE_FLOW,
          input: task,
          ...(values['run-id'] ? { flowId: values['run-id'] } : {}),
        });
        if (values['no-wait']) {
          io.stdout.write(`${flowId}\n`);
          return 0;
        }
        io.stderr.write(`Flow ${flowId} queued\n`);
        return followFlow(client, flowId, io);
      }
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

/** When the run waits for a person: the commands that show and give what it waits for. */
function writeWaiting(status: string, id: string, color: boolean, io: SessionIo): void {
  if (status !== 'awaiting_approval' && status !== 'awaiting_human') return;
  const command = status === 'awaiting_approval' ? 'approve' : 'answer';
  io.stderr.write(
    `${paint(color, 33)('  ⏸ waiting for a person:')} openmanus status ${id}, then openmanus ${command} ${id}\n`,
  );
}

/** Prints the run's transitions as they happen, then its answer; returns the exit code of its outcome. */
async function follow(client: DurableClient, runId: string, io: SessionIo): Promise<number> {
  const color = useColor(io.stderr, io.env);
  for await (const item of client.streamEvents(runId)) {
    for (const line of runEventLines(item, color)) io.stderr.write(`${line}\n`);
    writeWaiting(item.status, runId, color, io);
  }
  const info = await client.getRun(runId);
  if (info && (info.status === 'errored' || info.status === 'cancelled')) {
    return failure(io, 'openmanus enqueue')(`the run ${info.status}: ${info.error.message}`, 1);
  }
  const outcome = await client.waitForRun(runId);
  io.stderr.write(`${runLines(color).finished(outcome)}\n`);
  if (outcome.answer) io.stdout.write(`${outcome.answer}\n`);
  return reportOutcome(outcome, io, false, 'openmanus enqueue');
}

/** Prints each step's run as it happens (led by its step), then the plan and the summary; returns `openmanus flow`'s exit code. */
async function followFlow(client: DurableClient, flowId: string, io: SessionIo): Promise<number> {
  const color = useColor(io.stderr, io.env);
  let lastRun: string | undefined;
  for await (const item of client.streamFlowEvents(flowId)) {
    if (item.type === 'flow') {
      for (const observation of item.observations)
        if (observation.kind === 'stepBlocked' || observation.kind === 'stepRetried')
          io.stderr.write(`${paint(color, 33)(`  ! step ${observation.index}: ${observation.reason}`)}\n`);
      continue;
    }
    if (item.runId !== lastRun) {
      lastRun = item.runId;
      const step = item.stepIndex === undefined ? 'summary' : `step ${item.stepIndex}`;
      io.stderr.write(`${paint(color, 1)(`▸ ${step} [${item.executor}]`)} ${item.runId}\n`);
    }
    for (const line of runEventLines(item.item, color)) io.stderr.write(`  ${line}\n`);
    // The flow's id serves: approve and answer take it for the run of its step in flight.
    writeWaiting(item.item.status, flowId, color, io);
  }
  const info = await client.getFlow(flowId);
  if (info && (info.status === 'errored' || info.status === 'cancelled')) {
    return failure(io, 'openmanus enqueue')(`the flow ${info.status}: ${info.error.message}`, 1);
  }
  const outcome = await client.waitForFlow(flowId);
  for (const line of planView(outcome.plan, { color })) io.stderr.write(`${line}\n`);
  return reportFlowOutcome(outcome, io, 'openmanus enqueue');
}
