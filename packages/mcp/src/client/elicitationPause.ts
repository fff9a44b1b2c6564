import type {
  ElicitationAnswer,
  ElicitationRequest,
  ElicitationResult,
  JsonSchema,
  ToolScope,
  ToolSuspension,
} from '@openmanus/core';
import { checkElicitationAnswer, propertiesOf, withSchemaDefaults } from './elicitationAnswer.js';

// A server's question (elicitation) during a call while nobody is at hand to answer it (no
// `onElicitation`, not served over MCP): the run pauses on it as on ask_human, and the person's
// answer comes back with the resumed run. The server's request cannot stay open across a pause (the
// process may end before the answer), so the call is cancelled when it asks and made again on resume,
// where the same questions, asked again in the same order, get the stored answers at once.

/** A form (URL requests need a person at hand: a URL asked again on resume is a new one). */
type FormRequest = Extract<ElicitationRequest, { readonly schema: JsonSchema }>;

/** A question answered during the pauses of one call, and the answer. */
interface Answered {
  readonly request: FormRequest;
  readonly result: ElicitationResult;
}

interface Asking {
  readonly id: string;
  readonly request: FormRequest;
  /** Why the last answer to it was not taken. */
  readonly problem?: string;
}

/** What a call paused on a server's question keeps in the run's state (its `progress`). */
interface PausedQuestions {
  readonly answered: readonly Answered[];
  readonly asking: Asking;
  /** How often the call has paused: each pause's id is new (a host may take one answer per id). */
  readonly pauses: number;
}

/** One call's questions: put to the person at hand, answered from earlier pauses, or paused on. */
export interface CallQuestions {
  /** The scope to make the remote call with (its own `elicit`, and a signal that stops it on a pause). */
  readonly scope: ToolScope;
  /** The person's answer did not fit the form: ask again, without calling the server. */
  readonly askAgain: ToolSuspension | undefined;
  /** After the call: the pause, when the server asked what nobody here could answer. */
  suspension(): ToolSuspension | undefined;
}

/**
 * The questions of a call of `tool` (named `name` for the model) on `server`, as the run left them
 * (`scope.progress`, `scope.answer`).
 */
export function callQuestions(
  scope: ToolScope,
  server: string,
  tool: string,
  name: string,
  args: Record<string, unknown>,
): CallQuestions {
  const paused = pausedOf(scope.progress);
  const answered = [...(paused?.answered ?? [])];
  const call = { id: scope.callId, name, arguments: JSON.stringify(args) };
  const pauses = (paused?.pauses ?? 0) + 1;
  const pause = (question: Omit<Asking, 'id'>): ToolSuspension => {
    const asking: Asking = { ...question, id: `elicit-${pauses}` };
    const progress: { mcpElicitation: PausedQuestions } = { mcpElicitation: { answered, asking, pauses } };
    const { message, schema } = asking.request;
    return {
      suspend: {
        progress,
        waiting: [
          {
            kind: 'human',
            effectId: asking.id,
            question: questionText(server, tool, asking),
            call,
            form: { message, schema },
          },
        ],
      },
    };
  };

  let askAgain: ToolSuspension | undefined;
  if (paused && scope.answer?.type === 'humanReplied' && scope.answer.effectId === paused.asking.id) {
    const reply = replyOf(scope.answer.answer, paused.asking.request.schema);
    if (typeof reply === 'string') askAgain = pause({ request: paused.asking.request, problem: reply });
    else answered.push({ request: paused.asking.request, result: reply });
  }

  const stop = new AbortController();
  const signal = AbortSignal.any([scope.signal, stop.signal]);
  const personAtHand = scope.relay !== undefined || scope.onElicitation !== undefined;
  let replayed = 0;
  let asking: FormRequest | undefined;
  const elicit = async (request: ElicitationRequest): Promise<ElicitationResult> => {
    if (personAtHand || request.mode === 'url') return scope.elicit(request);
    const stored = answered[replayed];
    if (stored && sameQuestion(stored.request, request)) {
      replayed++;
      return stored.result;
    }
    // A question not asked before (or not in that order): the answers after it no longer apply.
    answered.length = replayed;
    asking = request;
    stop.abort();
    return { action: 'cancel' };
  };

  return {
    scope: { ...scope, signal, elicit },
    askAgain,
    suspension: () => (asking ? pause({ request: asking }) : undefined),
  };
}

const sameQuestion = (a: FormRequest, b: FormRequest) =>
  a.message === b.message && JSON.stringify(a.schema) === JSON.stringify(b.schema);

/** The saved questions of a paused call, if `progress` is that (a saved state is checked, not trusted). */
function pausedOf(progress: unknown): PausedQuestions | undefined {
  const saved = (progress as { mcpElicitation?: unknown } | null | undefined)?.mcpElicitation;
  if (typeof saved !== 'object' || saved === null) return undefined;
  const { answered, asking, pauses } = saved as Partial<PausedQuestions>;
  const isRequest = (r: unknown): r is FormRequest =>
    typeof (r as FormRequest | undefined)?.message === 'string' &&
    typeof (r as FormRequest).schema === 'object' &&
    (r as FormRequest).schema !== null;
  const isResult = (r: unknown) =>
    ['accept', 'decline', 'cancel'].includes((r as { action?: unknown } | undefined)?.action as string);
  if (!Array.isArray(answered) || !answered.every((a) => isRequest(a?.request) && isResult(a?.result)))
    return undefined;
  if (typeof asking?.id !== 'string' || !isRequest(asking.request)) return undefined;
  if (!Number.isSafeInteger(pauses) || (pauses as number) < 1) return undefined;
  return { answered, asking, pauses: pauses as number };
}

/**
 * A person's text as the answer to a form: `{"action": …}` as it stands, another JSON object as the
 * fields, plain text as the value of a form's only field, nothing as dismissed; else why not.
 */
export function replyOf(text: string, schema: JsonSchema): ElicitationResult | string {
  const trimmed = text.trim();
  if (trimmed === '') return { action: 'cancel' };
  const fields = Object.entries(propertiesOf(schema));
  let content: ElicitationAnswer;
  const parsed = parseJson(trimmed);
  if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
    const { action } = parsed as { action?: unknown };
    if (action === 'decline' || action === 'cancel') return { action };
    content = (action === 'accept' ? ((parsed as { content?: unknown }).content ?? {}) : parsed) as ElicitationAnswer;
    if (typeof content !== 'object' || content === null || Array.isArray(content))
      return 'its "content" must be an object';
  } else {
    const [only, ...more] = fields;
    if (!only || more.length > 0) return 'this form has several fields: answer with them as a JSON object';
    const [key, property] = only;
    content = { [key]: typedAnswer(trimmed, parsed, property.type) };
  }
  const filled = withSchemaDefaults(schema, content);
  const problem = checkElicitationAnswer(schema, filled);
  return problem === undefined ? { action: 'accept', content: filled } : problem;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A one-field form's plain answer as its type wants it (a number, a yes/no), else the text itself. */
function typedAnswer(text: string, parsed: unknown, type: unknown): ElicitationAnswer[string] {
  if ((type === 'number' || type === 'integer') && typeof parsed === 'number') return parsed;
  if (type === 'boolean') {
    if (/^(y|yes|true)$/i.test(text)) return true;
    if (/^(n|no|false)$/i.test(text)) return false;
  }
  if (type === 'array' && Array.isArray(parsed)) return parsed as readonly string[];
  return text;
}

/** The most fields, and characters of a field's description, the question's text lists. */
const MAX_FIELDS = 30;
const MAX_FIELD_TEXT = 200;

/** The question as a person reads it where no form is shown: the server's words, its fields, how to answer. */
function questionText(server: string, tool: string, { request, problem }: Asking): string {
  const fields = Object.entries(propertiesOf(request.schema));
  const required = (request.schema as { required?: unknown }).required;
  const isRequired = (key: string) => Array.isArray(required) && required.includes(key);
  const lines = fields.slice(0, MAX_FIELDS).map(([key, property]) => {
    const options = Array.isArray(property.enum) ? `one of ${JSON.stringify(property.enum)}` : String(property.type);
    const notes = [
      options,
      ...(isRequired(key) ? ['required'] : []),
      ...(property.default !== undefined ? [`default ${JSON.stringify(property.default)}`] : []),
    ];
    const about = typeof property.description === 'string' ? `: ${property.description}` : '';
    return `- ${key} (${notes.join(', ')})${about}`.slice(0, MAX_FIELD_TEXT);
  });
  if (fields.length > MAX_FIELDS) lines.push(`- … and ${fields.length - MAX_FIELDS} more`);
  const only = fields.length === 1 ? `, or just the value of ${fields[0]?.[0]}` : '';
  return [
    ...(problem ? [`Your last answer was not taken: ${problem}.`] : []),
    `The MCP server "${server}" asks, during its tool ${tool}: ${request.message}`,
    ...lines,
    `Answer with the fields as JSON${only}; {"action": "decline"} refuses, an empty answer dismisses it.`,
  ].join('\n');
}
