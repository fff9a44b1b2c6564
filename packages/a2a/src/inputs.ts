import type { Message, Part } from '@a2a-js/sdk';
import type { HostAnswer, PendingInput } from '@openmanus/core';
import { dataOf, dataPart, textOf, textPart } from './parts.js';

const YES = /^(y|yes|approve|approved|ok|allow)\.?$/i;
const NO = /^(n|no|deny|denied|reject|rejected)\b[.:,]?\s*(.*)$/is;

/** How a paused run's pending input is put to the client: a line of text and the same as data. */
export function askingParts(input: PendingInput): Part[] {
  if (input.kind === 'human')
    return [
      textPart(input.question),
      dataPart({ kind: 'question', effectId: input.effectId, question: input.question }),
    ];
  const args = JSON.stringify(input.args);
  return [
    textPart(
      `May I call ${input.call.name}(${args})? Answer "yes" or "no" (optionally "no: <reason>"), ` +
        'or send a data part {"approved": true | false, "reason"?: "..."}.',
    ),
    dataPart({ kind: 'approval', effectId: input.effectId, tool: input.call.name, args: input.args }),
  ];
}

/**
 * The answer a client's message gives to one of the inputs the run waits for: its text answers a
 * question; a data part `{approved, reason?}` or a text "yes" / "no[: reason]" decides an approval.
 * A data part's `effectId` picks the input when several wait; else the first. Undefined: the
 * message answers nothing (the client is asked again).
 */
export function answerOf(message: Message, waiting: readonly PendingInput[]): HostAnswer | undefined {
  const data = dataOf(message);
  const named =
    typeof data?.effectId === 'string' ? waiting.find((input) => input.effectId === data.effectId) : undefined;
  const input = named ?? waiting[0];
  if (!input) return undefined;
  const { effectId } = input;
  const text = textOf(message);
  if (input.kind === 'human') {
    const answer = text || (typeof data?.answer === 'string' ? data.answer : '');
    return answer ? { type: 'humanReplied', effectId, answer } : undefined;
  }
  if (typeof data?.approved === 'boolean') {
    const reason = typeof data.reason === 'string' && data.reason ? { reason: data.reason } : {};
    return data.approved ? { type: 'approvalGiven', effectId } : { type: 'approvalDenied', effectId, ...reason };
  }
  if (YES.test(text)) return { type: 'approvalGiven', effectId };
  const no = NO.exec(text);
  if (no) return { type: 'approvalDenied', effectId, ...(no[2] ? { reason: no[2].trim() } : {}) };
  return undefined;
}
