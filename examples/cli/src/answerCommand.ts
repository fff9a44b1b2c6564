import type { PendingInput } from '@openmanus/core';
import { AlreadyDecidedError } from '@openmanus/durable';
import { durableUsage } from './durableOptions.js';
import { type RunCommand, runCommand, runOrFlowStep } from './runCommand.js';
import type { SessionIo } from './session.js';

export const answerUsage = `Usage: openmanus answer <runId> "<text>" [--effect <id>] [options]

Answers the question a durable run asked a person (\`ask_human\`): the model reads the text and
the run goes on. \`openmanus status\` shows the question. Given a flow's id (\`openmanus enqueue
--flow\`), the run of its step in flight. Signed with the workers' decision key, as \`openmanus
approve\`: the first answer stands, a second is told "already decided".

Options:
  --effect <id>         the question to answer when the run asked several (its id in brackets
                        in \`openmanus status\`)
${durableUsage}
  -h, --help            show this help
Exit codes: 0 answered, 1 no such run, no question, already answered, no decision key or the
database unreachable, 2 bad input.`;

const answer: RunCommand = {
  name: 'answer',
  usage: answerUsage,
  options: { effect: { type: 'string' } },
  words: ['"<text>"'],
  run: async (client, { runId, values, words: [text = ''], io }) => {
    if (!text.trim()) throw new Error('the answer is empty');
    const info = await runOrFlowStep(client, runId);
    const target = info.runId;
    const asked = (info.status === 'running' ? (info.progress?.pending ?? []) : []).filter(
      (input): input is Extract<PendingInput, { kind: 'human' }> =>
        input.kind === 'human' && (values.effect === undefined || input.effectId === values.effect),
    );
    const [question, ...more] = asked;
    if (!question) {
      const waits = `run "${target}" is not waiting for an answer (it is ${info.status})`;
      // It may have been a moment ago: whoever answered first is named.
      const before = await client.lastDecision(target, 'human', values.effect as string | undefined);
      throw before ? new AlreadyDecidedError(before, waits) : new Error(waits);
    }
    if (more.length > 0) {
      const ids = asked.map((input) => input.effectId).join(', ');
      throw new Error(`run "${target}" asked ${asked.length} questions: choose one with --effect (${ids})`);
    }
    await client.answer(target, { type: 'humanReplied', effectId: question.effectId, answer: text });
    io.stdout.write(`Answered "${question.question}"\n`);
    return 0;
  },
};

/** `openmanus answer <runId> "text"`: answers a durable run's question for a person. */
export const answerCommand = (argv: string[], io: SessionIo) => runCommand(answer, argv, io);
