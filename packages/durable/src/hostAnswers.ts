import type { AgentPerformer, HostAnswer } from '@openmanus/core';
import type { DurableRuntime } from './runtime.js';

/**
 * Questions for people and approvals answered by a message to the run (`DurableClient.answer`)
 * on the topic of the effect's id, from any process. The wait is durable: a worker that dies
 * while the run waits leaves it waiting, and the answer is kept until the run reads it. With no
 * answer within `timeoutMs` the run pauses (its outcome lists what it waited for).
 */
export function answersBySignal(
  runtime: DurableRuntime,
  timeoutMs: number,
): { askHuman: AgentPerformer<'askHuman'>; requestApproval: AgentPerformer<'requestApproval'> } {
  const answer = async (effect: { readonly id: string }) => {
    const given = await runtime.waitForSignal<HostAnswer>(effect.id, timeoutMs);
    // The topic names the effect: an answer cannot be taken for another one.
    return given === null ? undefined : { ...given, effectId: effect.id };
  };
  return { askHuman: answer, requestApproval: answer };
}
