import type { LlmRequest } from '../kernel/effects.js';
import type { Message } from '../kernel/messages.js';
import type { ToolSpec } from '../kernel/tool.js';
import { lazyModule } from '../lazyModule.js';
import { mapStrings, type Placeholders, toPlaceholders } from './placeholders.js';
import type { RequestFingerprint } from './transcript.js';

const EXCERPT_CHARS = 120;

// node:crypto loads when a run is first recorded or replayed, not with the package.
const crypto = lazyModule<typeof import('node:crypto')>('node:crypto');
const hash = (text: string) => crypto().createHash('sha256').update(text).digest('hex').slice(0, 12);

/**
 * A message as the model sees it, in a fixed order, placeholders put in each string (before JSON
 * escapes it again); an image counts by its type (screenshots differ by a pixel).
 */
const seen = (message: Message, placeholders: Placeholders) =>
  JSON.stringify(
    mapStrings(
      [
        message.role,
        message.content,
        message.role === 'tool' ? [message.name, message.toolCallId] : null,
        message.role === 'assistant'
          ? (message.toolCalls ?? []).map((call) => [call.id, call.name, call.arguments])
          : null,
        'image' in message && message.image ? message.image.mimeType : null,
      ],
      (text) => toPlaceholders(text, placeholders),
    ),
  );

const labelOf = (message: Message) => (message.role === 'tool' ? `tool ${message.name}` : message.role);

/** The start of a message, on one line: its text, else the tools it calls. */
function excerptOf(message: Message, placeholders: Placeholders): string {
  const calls = message.role === 'assistant' ? (message.toolCalls ?? []) : [];
  const text = [message.content, ...calls.map((call) => `${call.name}(${call.arguments})`)]
    .filter((part) => part !== '')
    .join(' ');
  const line = toPlaceholders(text, placeholders).replace(/\s+/g, ' ').trim();
  return line.length > EXCERPT_CHARS ? `${line.slice(0, EXCERPT_CHARS)}…` : line;
}

const toolEntry = (tool: ToolSpec, placeholders: Placeholders) =>
  `${tool.name} ${hash(JSON.stringify(mapStrings([tool.name, tool.description, tool.parameters], (text) => toPlaceholders(text, placeholders))))}`;

const messageEntry = (message: Message, placeholders: Placeholders) =>
  `${labelOf(message)} ${hash(seen(message, placeholders))}`;

const hashOf = (entry: string) => entry.slice(entry.lastIndexOf(' ') + 1);
const labelOfEntry = (entry: string) => entry.slice(0, entry.lastIndexOf(' '));

/**
 * The fingerprint of a request; `known` holds the hashes already excerpted in this transcript
 * (the new ones are excerpted and added), none are when it is not given.
 */
export function fingerprint(request: LlmRequest, placeholders: Placeholders, known?: Set<string>): RequestFingerprint {
  const messages = request.messages.map((message) => messageEntry(message, placeholders));
  const excerpts: Record<string, string> = {};
  if (known)
    messages.forEach((entry, i) => {
      const id = hashOf(entry);
      const message = request.messages[i];
      if (known.has(id) || !message) return;
      known.add(id);
      excerpts[id] = excerptOf(message, placeholders);
    });
  return {
    messages,
    tools: request.tools.map((tool) => toolEntry(tool, placeholders)),
    toolChoice: request.toolChoice,
    ...(request.profile !== undefined ? { profile: request.profile } : {}),
    ...(Object.keys(excerpts).length > 0 ? { excerpts } : {}),
  };
}

const names = (entries: readonly string[]) => entries.map(labelOfEntry);
const list = (items: readonly string[]) => (items.length > 0 ? items.join(', ') : 'none');

/**
 * How a request differs from the recorded one, in words, or undefined when it matches.
 * `excerpts` holds the recording's excerpts by hash, to show what the recorded message said.
 */
export function divergence(
  recorded: RequestFingerprint,
  request: LlmRequest,
  placeholders: Placeholders,
  excerpts: ReadonlyMap<string, string>,
): string | undefined {
  const got = fingerprint(request, placeholders);
  if (got.profile !== recorded.profile)
    return `the profile differs: recorded ${recorded.profile ?? 'none'}, got ${got.profile ?? 'none'}`;
  if (got.toolChoice !== recorded.toolChoice)
    return `the tool choice differs: recorded ${recorded.toolChoice}, got ${got.toolChoice}`;
  const tools = divergentTools(recorded.tools, got.tools);
  if (tools) return tools;
  const at = firstDifference(recorded.messages, got.messages);
  if (at === undefined) return undefined;
  const message = request.messages[at];
  const recordedEntry = recorded.messages[at];
  if (!message)
    return `the request ends after ${got.messages.length} messages; the recording had ${recorded.messages.length}`;
  const gotText = `"${excerptOf(message, placeholders)}"`;
  if (recordedEntry === undefined)
    return `message ${at + 1} (${labelOf(message)}) is new: the recording had ${recorded.messages.length} messages; got ${gotText}`;
  const recordedText = excerpts.get(hashOf(recordedEntry));
  const last = at === got.messages.length - 1 && at === recorded.messages.length - 1;
  const which = last ? 'the last message' : `message ${at + 1} of ${got.messages.length}`;
  const roles =
    labelOfEntry(recordedEntry) === labelOf(message)
      ? `(${labelOf(message)})`
      : `(recorded ${labelOfEntry(recordedEntry)}, got ${labelOf(message)})`;
  return `${which} ${roles} differs: recorded ${recordedText === undefined ? 'a message not excerpted' : `"${recordedText}"`}, got ${gotText}`;
}

function divergentTools(recorded: readonly string[], got: readonly string[]): string | undefined {
  const before = names(recorded);
  const now = names(got);
  const missing = before.filter((name) => !now.includes(name));
  const added = now.filter((name) => !before.includes(name));
  if (missing.length > 0 || added.length > 0)
    return `the tools differ: ${[missing.length > 0 ? `missing ${list(missing)}` : '', added.length > 0 ? `new ${list(added)}` : ''].filter(Boolean).join('; ')}`;
  const changed = got.find((entry, i) => entry !== recorded[i]);
  if (changed === undefined) return undefined;
  const name = labelOfEntry(changed);
  return before.indexOf(name) !== now.indexOf(name)
    ? `the tools are in another order: recorded ${list(before)}, got ${list(now)}`
    : `tool ${name} differs (its description or parameters)`;
}

function firstDifference(recorded: readonly string[], got: readonly string[]): number | undefined {
  for (let i = 0; i < Math.max(recorded.length, got.length); i++) if (recorded[i] !== got[i]) return i;
  return undefined;
}
