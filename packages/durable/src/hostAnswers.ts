import type { AgentPerformer, HostAnswer } from '@openmanus/core';
import type { DurableRuntime } from './runtime.js';

/**
 * Takes a message sent to the run as the answer to `effectId` of run `runId`, or refuses it
 * (`undefined`, the refusal recorded): a worker takes only decisions signed with its key.
 */
export type AnswerCheck = (message: unknown, runId: string, effectId: string) => Promise<HostAnswer | undefined>;

/** Without a check, a message is the answer itself (for a host that authenticates answers on its own). */
const asSent: AnswerCheck = async (message) => message as HostAnswer;

/**
 * A person's answer to `effectId`, sent to the run as a message (`DurableClient.answer`) on the
 * topic of that id, from any process. The wait is durable: a worker that dies while the run waits
 * leaves it waiting, and the answer is kept until the run reads it. A message `check` refuses is
 * not an answer: the run waits on. `undefined` when no answer came within `timeoutMs`.
 */
export async function answerBySignal(
  runtime: DurableRuntime,
  effectId: string,
  timeoutMs: number,
  check: AnswerCheck = asSent,
): Promise<HostAnswer | undefined> {
  // A refused message does not buy more time: the wait ends when the first one would have.
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const given = await runtime.waitForSignal<unknown>(effectId, Math.max(1, deadline - Date.now()));
    if (given === null) return undefined;
    const taken = await check(given, runtime.runId, effectId);
    // The topic names the effect: an answer cannot be taken for another one.
    if (taken) return { ...taken, effectId };
  }
}

/**
 * Questions for people and approvals answered by a message to the run (`answerBySignal`). With no
 * answer within `timeoutMs` the run pauses (its outcome lists what it waited for).
 */
export function answersBySignal(
  runtime: DurableRuntime,
  timeoutMs: number,
  check?: AnswerCheck,
): { askHuman: AgentPerformer<'askHuman'>; requestApproval: AgentPerformer<'requestApproval'> } {
  const answer = (effect: { readonly id: string }) => answerBySignal(runtime, effect.id, timeoutMs, check);
  return { askHuman: answer, requestApproval: answer };
}
