import type { LlmRequest } from '../kernel/effects.js';
import { CONTEXT_LENGTH } from '../llm/failures.js';
import { type LlmErrorKind, type LlmPort, portComplete } from '../llm/llm.js';
import { err, ok } from '../result.js';
import { callArguments, callId, isFailure, nextReply, type Script, scriptExhausted, sleep, unused } from './script.js';

export interface ScriptedLlm extends LlmPort {
  /** Every request the model got, in order. */
  readonly requests: readonly LlmRequest[];
  /** Throws unless every scripted reply was used. */
  assertConsumed(): void;
}

const kindOf = (status: number | undefined): LlmErrorKind =>
  status === undefined
    ? 'network'
    : status === 429
      ? 'rate_limit'
      : status === 401 || status === 403
        ? 'auth'
        : status === 529
          ? 'overloaded'
          : status >= 500
            ? 'server'
            : 'bad_request';

/** An in-process model that answers from a script: for unit tests of agents, no network. */
export function scriptedLlm(script: Script<LlmRequest>, model = 'scripted'): ScriptedLlm {
  const requests: LlmRequest[] = [];
  return {
    model,
    requests,
    assertConsumed() {
      const left = unused(script, requests.length);
      if (left > 0)
        throw new Error(`scripted model: ${left} of ${left + requests.length} replies were never requested`);
    },
    complete: portComplete(async (request, options = {}) => {
      const index = requests.length;
      requests.push(request);
      const reply = nextReply(script, index, request);
      if (!reply) return err({ kind: 'bad_request', message: scriptExhausted(index) });
      if (reply.delayMs) {
        try {
          await sleep(reply.delayMs, options.signal);
        } catch {
          return err({ kind: 'aborted', message: 'the request was aborted' });
        }
      }
      if (isFailure(reply)) {
        const { status, message, code } = reply.error;
        const tooLong = code === 'context_length_exceeded' || CONTEXT_LENGTH.test(message ?? '');
        return err({
          kind: tooLong ? 'context_length' : kindOf(status),
          ...(status === undefined ? {} : { status }),
          message: message ?? (status === undefined ? 'the connection was cut' : `HTTP ${status}`),
        });
      }
      return ok({
        content: reply.content ?? '',
        toolCalls: (reply.toolCalls ?? []).map((call, i) => ({
          id: callId(call, index, i),
          name: call.name,
          arguments: callArguments(call),
        })),
        ...(reply.usage ? { usage: reply.usage } : {}),
        ...(reply.finishReason ? { finishReason: reply.finishReason } : {}),
        ...(reply.reasoning ? { reasoning: reply.reasoning } : {}),
      });
    }),
  };
}
