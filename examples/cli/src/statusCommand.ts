import type { FlowInfo, RunInfo } from '@openmanus/durable';
import { durableUsage } from './durableOptions.js';
import { type RunCommand, runCommand } from './runCommand.js';
import { flowStatusLines, runStatusLines } from './runStatusLines.js';
import type { SessionIo } from './session.js';

export const statusUsage = `Usage: openmanus status <runId> [options] [--json]

Where a durable run is: queued, running (on which worker, at which step, and what it waits for
from a person), or ended (its answer), cancelled or failed. A long run is one run throughout,
however many times it continued as a fresh workflow. Given a flow's id (\`openmanus enqueue
--flow\`): its plan as far as it got, the run of its step in flight, and at the end its summary.

Options:
${durableUsage}
  --json                the status as JSON (the outcome without the run's whole state)
  -h, --help            show this help
Exit codes: 0 found, 1 no such run or flow or the database unreachable, 2 bad input.`;

const status: RunCommand = {
  name: 'status',
  usage: statusUsage,
  options: { json: { type: 'boolean', default: false } },
  run: async (client, { runId, values, io }) => {
    const info = await client.getRun(runId);
    const flow = info ? undefined : await client.getFlow(runId);
    if (!info && !flow) throw new Error(`no run or flow has the id "${runId}"`);
    const lines = info ? runStatusLines(info) : flow ? flowStatusLines(flow) : [];
    // Decisions the workers refused: someone without the key tried to approve, answer or cancel.
    const refusals = await client.refusals(runId);
    if (values.json) {
      const json = { ...withoutState(info ?? flow), ...(refusals.length > 0 ? { refusals } : {}) };
      io.stdout.write(`${JSON.stringify(json)}\n`);
      return 0;
    }
    for (const line of lines) io.stdout.write(`${line}\n`);
    for (const refusal of refusals)
      io.stdout.write(`  ! refused at ${refusal.noticedAt}: ${refusal.subject} (${refusal.reason})\n`);
    return 0;
  },
};

/** The status with its outcome's state left out: the whole history, too much for a status. */
function withoutState(info: RunInfo | FlowInfo | undefined) {
  if (!info) return info;
  if (info.status !== 'ended') return info;
  const { state: _state, ...outcome } = info.outcome;
  return { ...info, outcome };
}

/** `openmanus status <runId>`: prints a durable run's status (`getRun`). */
export const statusCommand = (argv: string[], io: SessionIo) => runCommand(status, argv, io);
