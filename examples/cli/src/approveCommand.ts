import { durableUsage } from './durableOptions.js';
import { type RunCommand, runCommand, runOrFlowStep } from './runCommand.js';
import { callText } from './runStatusLines.js';
import type { SessionIo } from './session.js';

export const approveUsage = `Usage: openmanus approve <runId> [--reject <reason>] [--effect <id>] [options]

Approves the tool calls a durable run waits to have approved (\`openmanus worker --approve\`), so
the run goes on; with --reject, denies them and the model reads the reason. \`openmanus status\`
shows what the run waits for. Given a flow's id (\`openmanus enqueue --flow\`), the run of its
step in flight. The decision is signed with the workers' decision key (the workers take no
other); the first decision about a call stands: a second one, from anyone, is told "already
decided: approved by … at …" and exits 1.

Options:
  --reject <reason>     deny instead of approving
  --effect <id>         only this call (its id in brackets in \`openmanus status\`); default: every
                        call the run waits to have approved
${durableUsage}
  -h, --help            show this help
Exit codes: 0 answered, 1 no such run, nothing to approve, already decided, no decision key or the
database unreachable, 2 bad input.`;

const approve: RunCommand = {
  name: 'approve',
  usage: approveUsage,
  options: { reject: { type: 'string' }, effect: { type: 'string' } },
  run: async (client, { runId, values, io }) => {
    const reject = values.reject as string | undefined;
    const effectId = values.effect as string | undefined;
    const answered = await client.approve((await runOrFlowStep(client, runId)).runId, {
      ...(reject !== undefined ? { reject } : {}),
      ...(effectId !== undefined ? { effectId } : {}),
    });
    for (const input of answered) {
      if (input.kind !== 'approval') continue;
      io.stdout.write(`${reject === undefined ? 'Approved' : `Rejected (${reject})`}: ${callText(input)}\n`);
    }
    return 0;
  },
};

/** `openmanus approve <runId>`: approves (or rejects) what a durable run waits for. */
export const approveCommand = (argv: string[], io: SessionIo) => runCommand(approve, argv, io);
