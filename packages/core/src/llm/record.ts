import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ToolCall } from '../kernel/messages.js';
import { messageOf } from '../messageOf.js';
import { err } from '../result.js';
import { fingerprint } from './fingerprint.js';
import { type LlmPort, llmAnswerOf, portComplete } from './llm.js';
import { mapStrings, type Placeholders, toPlaceholders } from './placeholders.js';
import { type RecordedReply, type RecordedToolCall, TRANSCRIPT_VERSION, type Transcript } from './transcript.js';

export interface RecordOptions {
  /** Written after every call (whole, through a temporary file): a crashed run leaves a usable transcript. */
  readonly file?: string;
  /** Given the transcript so far after every call (to keep it elsewhere); awaited before the reply goes on. */
  readonly sink?: (transcript: Transcript) => void | Promise<void>;
  /** Values that change from run to run, written as `{{name}}` (e.g. `{ workspace: '/tmp/ws' }`). */
  readonly placeholders?: Placeholders;
}

export interface RecordingLlm extends LlmPort {
  /** The transcript so far: every finished call, in the order the calls were made. */
  transcript(): Transcript;
}

/** Arguments as recorded: parsed when the model wrote compact JSON (so replay writes the same text), else the text. */
function recordedArguments(raw: string, fill: (text: string) => string): unknown {
  try {
    const parsed: unknown = JSON.parse(raw);
    if (JSON.stringify(parsed) === raw && typeof parsed === 'object' && parsed !== null)
      return mapStrings(parsed, fill);
  } catch {
    // Malformed arguments are kept as written, for the agent to get the same error on replay.
  }
  return fill(raw);
}

const recordedCalls = (calls: readonly ToolCall[], fill: (text: string) => string): RecordedToolCall[] =>
  calls.map((call) => ({ id: call.id, name: call.name, arguments: recordedArguments(call.arguments, fill) }));

/**
 * A model port that forwards every call to `port` and records what was asked and what came back
 * (failures too) as a transcript that `replayLlm` answers from. Calls are recorded in the order
 * they were made. When the file or sink cannot take the transcript the call fails with that
 * reason: a recording run that silently records nothing is worse than one that stops.
 */
export function recordLlm(port: LlmPort, options: RecordOptions = {}): RecordingLlm {
  const placeholders = options.placeholders ?? {};
  const fill = (text: string) => toPlaceholders(text, placeholders);
  const replies: (RecordedReply | undefined)[] = [];
  const excerpted = new Set<string>();
  const transcript = (): Transcript => {
    const end = replies.indexOf(undefined);
    const done = (end === -1 ? replies : replies.slice(0, end)) as RecordedReply[];
    return { version: TRANSCRIPT_VERSION, model: port.model, replies: done };
  };
  const { file } = options;
  let saving: Promise<void> = file ? mkdir(dirname(file), { recursive: true }).then(() => {}) : Promise.resolve();
  const save = (snapshot: Transcript) => {
    saving = saving.then(async () => {
      if (file) {
        const temporary = `${file}.${process.pid}.tmp`;
        await writeFile(temporary, `${JSON.stringify(snapshot, null, 2)}\n`);
        await rename(temporary, file);
      }
      await options.sink?.(snapshot);
    });
    return saving;
  };
  let started = false;

  return {
    model: port.model,
    transcript,
    complete: portComplete(async (request, callOptions) => {
      if (!started) {
        // The empty transcript first: a file that cannot be written stops the run before it costs a call.
        started = true;
        save(transcript());
      }
      try {
        await saving;
      } catch (error) {
        return err({ kind: 'config', message: `the transcript cannot be saved: ${messageOf(error)}` });
      }
      const index = replies.length;
      replies.push(undefined);
      const asked = fingerprint(request, placeholders, excerpted);
      const result = llmAnswerOf(await port.complete(request, callOptions));
      replies[index] = result.isOk()
        ? {
            request: asked,
            content: fill(result.value.content),
            ...(result.value.toolCalls.length > 0 ? { toolCalls: recordedCalls(result.value.toolCalls, fill) } : {}),
            ...(result.value.usage ? { usage: result.value.usage } : {}),
          }
        : { request: asked, error: { ...result.error, message: fill(result.error.message) } };
      try {
        await save(transcript());
      } catch (error) {
        return err({ kind: 'config', message: `the transcript cannot be saved: ${messageOf(error)}` });
      }
      return result;
    }),
  };
}
