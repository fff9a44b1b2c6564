import { err } from '../result.js';
import { divergence } from './fingerprint.js';
import { type LlmPort, portComplete } from './llm.js';
import type { Placeholders } from './placeholders.js';
import { restoreReply, type Transcript } from './transcript.js';

export interface ReplayOptions {
  /** Check each request against the recorded one (default true); false answers in order whatever is asked. */
  readonly strict?: boolean;
  /** This run's values for the transcript's `{{name}}` placeholders. */
  readonly placeholders?: Placeholders;
}

export interface ReplayLlm extends LlmPort {
  /** Calls answered so far. */
  readonly calls: number;
  /** Why the replay stopped: the first divergence from the recording, if there was one. */
  readonly diverged: string | undefined;
  /** Throws unless every recorded call was made (an agent that stopped early diverged too). */
  assertConsumed(): void;
}

/**
 * A model port that answers from a transcript, offline and in order: the recorded reply, or the
 * recorded failure. A request that is not the recorded one (a changed prompt, other tools, another
 * tool result fed back, a call past the end) gets a `bad_request` error naming the call and what
 * differs, so the run ends with that reason — `replay diverged at model call 3 of 7: …`.
 */
export function replayLlm(transcript: Transcript, options: ReplayOptions = {}): ReplayLlm {
  const { strict = true, placeholders = {} } = options;
  const total = transcript.replies.length;
  const excerpts = new Map(transcript.replies.flatMap((reply) => Object.entries(reply.request.excerpts ?? {})));
  let calls = 0;
  let diverged: string | undefined;
  const fail = (message: string) => {
    diverged ??= message;
    return err({ kind: 'bad_request' as const, message: diverged });
  };
  return {
    model: transcript.model,
    get calls() {
      return calls;
    },
    get diverged() {
      return diverged;
    },
    assertConsumed() {
      if (diverged) throw new Error(diverged);
      if (calls < total)
        throw new Error(`replay: the agent made ${calls} model calls; the recording has ${total}, so it stopped early`);
    },
    complete: portComplete(async (request) => {
      if (diverged) return fail(diverged);
      const number = ++calls;
      const reply = transcript.replies[number - 1];
      if (!reply) return fail(`replay diverged at model call ${number}: the recording ends after ${total} calls`);
      const differs = strict ? divergence(reply.request, request, placeholders, excerpts) : undefined;
      if (differs) return fail(`replay diverged at model call ${number} of ${total}: ${differs}`);
      return restoreReply(reply, placeholders);
    }),
  };
}
