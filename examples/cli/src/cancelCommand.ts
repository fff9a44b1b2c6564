import { durableUsage } from './durableOptions.js';
import { type RunCommand, runCommand } from './runCommand.js';
import { flowStatusLines, runStatusLines } from './runStatusLines.js';
import type { SessionIo } from './session.js';

export const cancelUsage = `Usage: openmanus cancel <runId> [options]

Stops a durable run wherever it runs: the worker stops the call in flight (within about a
second), nothing more of the run is recorded, and it never resumes. A run that has already ended
stays as it ended. Given a flow's id, stops the flow and the run of its step in flight. Signed
with the workers' decision key: a worker undoes a cancel without it (one made through DBOS).

Options:
${durableUsage}
  -h, --help            show this help
Exit codes: 0 cancelled (or had ended), 1 no such run or flow, no decision key or the database
unreachable, 2 bad input.`;

const cancel: RunCommand = {
  name: 'cancel',
  usage: cancelUsage,
  run: async (client, { runId, io }) => {
    const info = await client.cancel(runId);
    const flow = info ? undefined : await client.cancelFlow(runId);
    if (!info && !flow) throw new Error(`no run or flow has the id "${runId}"`);
    const lines = info ? runStatusLines(info) : flow ? flowStatusLines(flow) : [];
    for (const line of lines) io.stdout.write(`${line}\n`);
    return 0;
  },
};

/** `openmanus cancel <runId>`: cancels a durable run from any process. */
export const cancelCommand = (argv: string[], io: SessionIo) => runCommand(cancel, argv, io);
