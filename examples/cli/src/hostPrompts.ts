import { createInterface, type Interface } from 'node:readline';
import type {
  ApprovalDecision,
  ElicitationAnswer,
  ElicitationRequest,
  ElicitationResult,
  HostCallbacks,
  SamplingMessage,
  SamplingRequest,
  ToolCall,
} from '@openmanus/core';
import { checkElicitationAnswer } from '@openmanus/mcp';
import { preview } from './progress.js';
import type { SessionIo } from './session.js';
import { terminalText } from './terminalText.js';

type Property = Readonly<Record<string, unknown>>;
type Value = ElicitationAnswer[string];

/** The terminal's lines one at a time, each after its prompt; `undefined` once the input ends (Ctrl+D) or Ctrl+C is pressed. */
export interface TerminalLines {
  ask(prompt: string): Promise<string | undefined>;
  close(): void;
}

/**
 * The lines of `rl` (of a new interface on the session's stdin if none is given). A session that
 * reads its tasks from the terminal asks everything through one: two interfaces on one stdin would
 * both get every line typed.
 */
export function terminalLines(io: SessionIo, given?: Interface): TerminalLines {
  const rl = given ?? createInterface({ input: io.stdin, output: io.stderr });
  // Ctrl+C at a question of its own cancels the question (a session's interface has its own say).
  if (!given) rl.on('SIGINT', () => rl.close());
  const typed: string[] = [];
  const waiting: ((line: string | undefined) => void)[] = [];
  let closed = false;
  rl.on('line', (line) => {
    const next = waiting.shift();
    if (next) next(line);
    else typed.push(line);
  });
  rl.on('close', () => {
    closed = true;
    for (const next of waiting.splice(0)) next(undefined);
  });
  return {
    ask(prompt: string): Promise<string | undefined> {
      // Lines typed ahead (or piped) come first, even once the input has ended.
      if (typed.length > 0) {
        io.stderr.write(prompt);
        return Promise.resolve(typed.shift());
      }
      // Node throws when a closed interface prompts.
      if (closed) return Promise.resolve(undefined);
      rl.setPrompt(prompt);
      rl.prompt();
      return new Promise((resolve) => waiting.push(resolve));
    },
    close: () => rl.close(),
  };
}

/** Runs `task` with the session's lines, or with lines of its own it closes after. */
async function withLines<T>(
  io: SessionIo,
  lines: TerminalLines | undefined,
  task: (lines: TerminalLines) => Promise<T>,
) {
  const own = lines ?? terminalLines(io);
  try {
    return await task(own);
  } finally {
    if (!lines) own.close();
  }
}

const propertiesOf = (schema: unknown): [string, Property][] => {
  const properties = (schema as { properties?: unknown }).properties;
  return typeof properties === 'object' && properties !== null
    ? Object.entries(properties as Record<string, Property>)
    : [];
};

/** An enum property's choices: `enum` (with `enumNames`), or the `oneOf` / `anyOf` consts with their titles. */
function choicesOf(property: Property): { value: string; title?: string }[] | undefined {
  if (Array.isArray(property.enum)) {
    const names = Array.isArray(property.enumNames) ? property.enumNames : [];
    return property.enum.map((value, i) => ({
      value: String(value),
      ...(typeof names[i] === 'string' ? { title: names[i] as string } : {}),
    }));
  }
  const options = Array.isArray(property.oneOf) ? property.oneOf : Array.isArray(property.anyOf) ? property.anyOf : [];
  const consts = options.flatMap((option: unknown) => {
    if (typeof option !== 'object' || option === null || !('const' in option)) return [];
    const { const: value, title } = option as { const: unknown; title?: unknown };
    return [{ value: String(value), ...(typeof title === 'string' ? { title } : {}) }];
  });
  return consts.length > 0 ? consts : undefined;
}

/** One choice typed as its number, its value or its title. */
function choiceOf(choices: readonly { value: string; title?: string }[], typed: string): string {
  const index = /^\d+$/.test(typed) ? Number(typed) - 1 : -1;
  const picked =
    choices[index] ??
    choices.find((c) => c.value === typed) ??
    choices.find((c) => c.title?.toLowerCase() === typed.toLowerCase());
  return picked?.value ?? typed;
}

/** The value a person typed for `property`, as its type has it (checked after, against the schema). */
function typedValue(property: Property, typed: string): Value {
  switch (property.type) {
    case 'number':
    case 'integer':
      return /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(typed) ? Number(typed) : Number.NaN;
    case 'boolean':
      if (/^(y|yes|true)$/i.test(typed)) return true;
      if (/^(n|no|false)$/i.test(typed)) return false;
      return typed;
    case 'array': {
      const items = typeof property.items === 'object' && property.items !== null ? (property.items as Property) : {};
      const choices = choicesOf(items) ?? [];
      return typed
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean)
        .map((item) => choiceOf(choices, item));
    }
    default: {
      const choices = choicesOf(property);
      return choices ? choiceOf(choices, typed) : typed;
    }
  }
}

/** What the person is told about a field besides its name: its type, bounds and format. */
function hintOf(property: Property): string {
  const parts: string[] = [];
  const { type, format, minimum, maximum, minLength, maxLength } = property;
  if (type === 'boolean') parts.push('yes or no');
  else if (type === 'array') parts.push('one or more, separated by commas');
  else if (type === 'number' || type === 'integer') parts.push(String(type));
  if (typeof format === 'string') parts.push(format);
  if (typeof minimum === 'number') parts.push(`at least ${minimum}`);
  if (typeof maximum === 'number') parts.push(`at most ${maximum}`);
  if (typeof minLength === 'number') parts.push(`at least ${minLength} characters`);
  if (typeof maxLength === 'number') parts.push(`at most ${maxLength} characters`);
  return parts.join(', ');
}

const shown = (text: unknown) => terminalText(String(text), { oneLine: true });

/**
 * Asks a tool's question on the terminal: the message, then each field of the form (its title,
 * description, choices and default), each answer checked against the schema and asked again when
 * it does not fit. Enter keeps a field's default or leaves out an optional one; "decline" declines
 * the form, and Ctrl+D or Ctrl+C cancels it.
 */
export async function askElicitation(
  io: SessionIo,
  request: ElicitationRequest,
  call: Pick<ToolCall, 'name'>,
  session?: TerminalLines,
): Promise<ElicitationResult> {
  if (request.mode === 'url') return askUrl(io, request, call, session);
  return withLines(io, session, async (lines) => {
    io.stderr.write(
      `\n${shown(call.name)} asks:\n${terminalText(request.message)}\n` +
        '(Enter keeps the [default] or skips a field that is not required; "decline" says no; Ctrl+D cancels.)\n',
    );
    const required = (request.schema as { required?: unknown }).required;
    const mustHave = new Set(Array.isArray(required) ? required : []);
    const content: Record<string, Value> = {};
    for (const [key, property] of propertiesOf(request.schema)) {
      const title = typeof property.title === 'string' ? property.title : key;
      const description = typeof property.description === 'string' ? ` — ${shown(property.description)}` : '';
      const choices =
        choicesOf(property) ?? (property.type === 'array' ? choicesOf((property.items ?? {}) as Property) : undefined);
      const hint = hintOf(property);
      const fallback = property.default;
      io.stderr.write(`${shown(title)}${mustHave.has(key) ? ' (required)' : ''}${description}\n`);
      if (choices) {
        io.stderr.write(
          `${choices.map((c, i) => `  ${i + 1}) ${shown(c.title ?? c.value)}${c.title ? ` (${shown(c.value)})` : ''}`).join('\n')}\n`,
        );
      }
      const prompt = `${hint ? `(${hint}) ` : ''}${fallback !== undefined ? `[${shown(Array.isArray(fallback) ? fallback.join(', ') : fallback)}] ` : ''}> `;
      for (;;) {
        const line = await lines.ask(prompt);
        if (line === undefined) return { action: 'cancel' };
        const typed = line.trim();
        if (typed.toLowerCase() === 'decline') return { action: 'decline' };
        if (typed === '') {
          if (fallback !== undefined) content[key] = fallback as Value;
          else if (mustHave.has(key)) {
            io.stderr.write('  This field is required.\n');
            continue;
          }
          break;
        }
        const value = typedValue(property, typed);
        const problem = checkElicitationAnswer({ type: 'object', properties: { [key]: property } }, { [key]: value });
        if (problem === undefined) {
          content[key] = value;
          break;
        }
        io.stderr.write(`  ${shown(problem.replace(/^"[^"]*" /, ''))}.\n`);
      }
    }
    return { action: 'accept', content };
  });
}

/**
 * Shows a URL a tool asks the person to open, as the server's (with its site apart, so that a
 * look-alike stands out), and asks whether they opened it and are done: y accepts, anything else
 * declines, Ctrl+D cancels. The URL is never opened for them.
 */
async function askUrl(
  io: SessionIo,
  request: Extract<ElicitationRequest, { mode: 'url' }>,
  call: Pick<ToolCall, 'name'>,
  session?: TerminalLines,
): Promise<ElicitationResult> {
  return withLines(io, session, async (lines) => {
    const from = request.server ? `the MCP server "${shown(request.server)}"` : shown(call.name);
    const site = URL.parse(request.url)?.host;
    io.stderr.write(
      `\n${shown(call.name)} asks you to open a link of ${from}:\n${terminalText(request.message)}\n` +
        `  ${shown(request.url)}\n${site ? `  (site: ${shown(site)})\n` : ''}` +
        'It is not opened for you: open it in your browser only if you trust it.\n',
    );
    const answer = await lines.ask('Opened it and done? [y/N] ');
    if (answer === undefined) return { action: 'cancel' };
    return /^(y|yes)$/i.test(answer.trim()) ? { action: 'accept', content: {} } : { action: 'decline' };
  });
}

const blockText = (block: SamplingContent): string => {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'tool_use':
      return `[calls the tool ${block.name}]`;
    case 'tool_result':
      return `[the result of a tool call: ${block.content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join(' ')}]`;
    default:
      return `[${block.type}, ${block.mimeType}, ${Math.floor((block.data.length * 3) / 4)} bytes]`;
  }
};

type SamplingContent = Exclude<SamplingMessage['content'], readonly unknown[]>;

const messageText = ({ content }: SamplingMessage) =>
  (Array.isArray(content) ? content : [content as SamplingContent]).map(blockText).join(' ');

/** Shows a tool's request for the model (its system prompt and last message, shortened) and asks y/N. */
export async function askSampling(
  io: SessionIo,
  request: SamplingRequest,
  call: Pick<ToolCall, 'name'>,
  session?: TerminalLines,
): Promise<ApprovalDecision> {
  return withLines(io, session, async (lines) => {
    const last = request.messages.at(-1);
    const count = request.messages.length;
    io.stderr.write(
      `\n${shown(call.name)} asks to use your model (at most ${request.maxTokens} tokens, ${count} message${count === 1 ? '' : 's'}):\n` +
        (request.systemPrompt ? `  system: ${preview(request.systemPrompt, 200)}\n` : '') +
        (last ? `  ${last.role}: ${preview(messageText(last), 400)}\n` : '') +
        (request.tools?.length
          ? `  tools the model may ask for (the server runs them, not you): ${preview(request.tools.map((tool) => tool.name).join(', '), 200)}\n`
          : ''),
    );
    const answer = (await lines.ask('Allow it? [y/N] '))?.trim().toLowerCase();
    return answer === 'y' || answer === 'yes' ? true : { approved: false, reason: 'the person said no' };
  });
}

/**
 * The host's answers to tools' questions and requests for the model, asked on the terminal one at a
 * time (through the session's `lines` when it has them). Without a terminal no one can answer, and nothing may wait for one: the question is
 * declined and the request refused, each with a note on stderr.
 */
export function terminalHostCallbacks(
  io: SessionIo,
  command: string,
  lines?: TerminalLines,
): Required<Pick<HostCallbacks, 'onElicitation' | 'onSampling'>> {
  let queue: Promise<unknown> = Promise.resolve();
  const oneAtATime = <T>(task: () => Promise<T>): Promise<T> => {
    const next = queue.then(task, task);
    queue = next.catch(() => undefined);
    return next;
  };
  const note = (text: string) => io.stderr.write(`${command}: ${text} (not attached to a terminal)\n`);
  return {
    onElicitation: (request, call) => {
      if (!io.stdin.isTTY) {
        const link = request.mode === 'url' ? ` (a link to ${preview(request.url, 120)})` : '';
        note(`declined the question of ${shown(call.name)}: ${preview(request.message, 120)}${link}`);
        return { action: 'decline' };
      }
      return oneAtATime(() => askElicitation(io, request, call, lines));
    },
    onSampling: (request, call) => {
      if (!io.stdin.isTTY) {
        note(`refused ${shown(call.name)} the use of the model`);
        return { approved: false, reason: 'no one is at a terminal to approve it' };
      }
      return oneAtATime(() => askSampling(io, request, call, lines));
    },
  };
}
