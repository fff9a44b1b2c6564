import { runErrorOf } from '../errors.js';
import type { LlmRequest } from '../kernel/effects.js';
import type { LlmCallAnswer } from '../kernel/events.js';
import { type LlmDelta, type LlmPort, llmAnswerOf, runErrorOfLlm } from '../llm/llm.js';

/**
 * Performs one model call and answers it as an event: the reply, or the failure with its reason
 * (a port that throws included). Nothing when the call was aborted: the run is ending anyway.
 */
export async function answerLlmCall(
  llm: LlmPort,
  effect: { readonly id: string; readonly request: LlmRequest },
  { signal, onDelta }: { readonly signal: AbortSignal; readonly onDelta?: (delta: LlmDelta) => void },
): Promise<LlmCallAnswer | undefined> {
  try {
    const result = llmAnswerOf(await llm.complete(effect.request, onDelta ? { signal, onDelta } : { signal }));
    if (result.isOk()) {
      const { content, toolCalls, usage, reasoning } = result.value;
      return {
        type: 'llmResponded',
        effectId: effect.id,
        content,
        toolCalls,
        ...(usage ? { usage } : {}),
        ...(reasoning?.length ? { reasoning } : {}),
      };
    }
    return signal.aborted ? undefined : { type: 'llmFailed', effectId: effect.id, error: runErrorOfLlm(result.error) };
  } catch (error) {
    return {
      type: 'llmFailed',
      effectId: effect.id,
      error: runErrorOf(error, 'LLM_PORT_THREW', 'the LLM port threw: '),
    };
  }
}
