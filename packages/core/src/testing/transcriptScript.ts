import type { LlmUsage } from '../kernel/events.js';
import type { Placeholders } from '../llm/placeholders.js';
import { restoreReply, type Transcript } from '../llm/transcript.js';
import type { ScriptedAnswer, ScriptedReply } from './script.js';

/**
 * A transcript's replies as a script for `startOpenAiServer` (or `scriptedLlm`), with this run's
 * values for its placeholders: a recording served over HTTP, answering in order whatever is asked
 * (`replayLlm` is the one that checks the requests).
 */
export function transcriptScript(transcript: Transcript, placeholders: Placeholders = {}): ScriptedReply[] {
  return transcript.replies.map((reply) => {
    const restored = restoreReply(reply, placeholders);
    if (!restored.isOk()) {
      const { status, message } = restored.error;
      return { error: { ...(status === undefined ? {} : { status }), message } };
    }
    const { content, toolCalls, usage } = restored.value;
    return {
      content,
      ...(toolCalls.length > 0
        ? { toolCalls: toolCalls.map(({ id, name, arguments: args }) => ({ id, name, arguments: args })) }
        : {}),
      // The tokens only: whoever serves the script prices them (the port behind the server).
      ...(usage ? { usage: tokensOf(usage) } : {}),
    };
  });
}

const tokensOf = ({ costUsd: _, ...tokens }: LlmUsage): NonNullable<ScriptedAnswer['usage']> => tokens;
