// Structured output: a zod schema in, a validated object out. The model answers by calling one
// tool whose parameters are the schema; what it sends is checked against the schema, and a wrong
// answer goes back to it with the errors until it gets it right or the attempts run out.

import {
  defineTool,
  describeLlmError,
  err,
  hasErrorCode,
  type LlmError,
  type LlmPort,
  type Message,
  OpenManusError,
  ok,
  type Result,
  ResultAsync,
  type Tool,
  type ToolCall,
} from '@openmanus/core';
import { assistantMessage, userMessage } from '@openmanus/core/kernel';
import { z } from 'zod';

/** The tool's name in OpenManus, which models and prompts know it by. */
export const CHAT_COMPLETION_TOOL = 'create_chat_completion';

const DEFAULT_DESCRIPTION = 'Give your final answer in the structure its parameters describe.';

/** The default answer, as OpenManus's for a plain string: the model sends `{ response }`. */
const textAnswer = z.string().describe('The complete answer.');

interface AnswerShape<T> {
  /** The tool's parameters: always an object, as function calling requires. */
  readonly parameters: z.ZodType;
  /** The answer inside the validated arguments. */
  readonly unwrap: (args: unknown) => T;
}

/** An object schema is the tool's parameters as it is; anything else is asked for as `{ response }`. */
function answerShape<S extends z.ZodType>(schema: S): AnswerShape<z.output<S>> {
  if (schema instanceof z.ZodObject) return { parameters: schema, unwrap: (args) => args as z.output<S> };
  return {
    parameters: z.object({ response: schema }),
    unwrap: (args) => (args as { response: z.output<S> }).response,
  };
}

export interface ChatCompletionToolOptions<S extends z.ZodType> {
  /** The answer's shape (default: a string, sent as `{ response }`). */
  readonly schema?: S;
  /** Default `create_chat_completion`. */
  readonly name?: string;
  readonly description?: string;
  /** A valid call ends the run (default false: as in OpenManus, the model calls `terminate` after it). */
  readonly terminal?: boolean;
}

/**
 * OpenManus's `create_chat_completion` tool: the model calls it to give its answer in a fixed
 * structure. Arguments that do not match the schema are refused with the reasons (the model sees
 * them and can try again); a valid answer comes back as the text of the answer (a string answer)
 * or its JSON.
 */
export function createChatCompletionTool<S extends z.ZodType = typeof textAnswer>(
  options: ChatCompletionToolOptions<S> = {},
): Tool<unknown> {
  const shape = answerShape(options.schema ?? textAnswer);
  return defineTool({
    name: options.name ?? CHAT_COMPLETION_TOOL,
    description: options.description ?? DEFAULT_DESCRIPTION,
    parameters: shape.parameters,
    parallelSafe: true,
    ...(options.terminal ? { terminal: true } : {}),
    execute: (args) => {
      const answer: unknown = shape.unwrap(args);
      return typeof answer === 'string' ? answer : JSON.stringify(answer, null, 2);
    },
  });
}

/** Why no structured answer was had. */
export type StructuredOutputFailure =
  /** The model could not be asked (the port already retried what can be retried). */
  | 'llm_error'
  /** It answered in text, or called some other tool. */
  | 'no_tool_call'
  /** Its arguments were not JSON. */
  | 'malformed_arguments'
  /** Its arguments did not match the schema. */
  | 'invalid_arguments';

/** No structured answer was had: `reason` says why, `llmError` what the port said when it could not ask. */
export class StructuredOutputError extends OpenManusError<'STRUCTURED_OUTPUT'> {
  static readonly codes = ['STRUCTURED_OUTPUT'] as const;
  override readonly name = 'StructuredOutputError';
  constructor(
    message: string,
    readonly reason: StructuredOutputFailure,
    /** Requests made. */
    readonly attempts: number,
    readonly llmError?: LlmError,
  ) {
    super('STRUCTURED_OUTPUT', message);
  }
  static override isInstance(value: unknown): value is StructuredOutputError {
    return hasErrorCode(value, StructuredOutputError.codes);
  }
}

/** The conversation to answer: one prompt (with an optional system prompt), or messages. */
export type ChatCompletionInput =
  | { readonly prompt: string; readonly system?: string }
  | { readonly messages: readonly Message[] };

export type ChatCompletionOptions<S extends z.ZodType> = ChatCompletionInput & {
  readonly llm: LlmPort;
  readonly schema: S;
  /** Requests at most, the first included (default 3). */
  readonly maxAttempts?: number;
  /** The tool's name (default `create_chat_completion`). */
  readonly name?: string;
  readonly description?: string;
  /** The LLM profile to ask for (config.toml `[llm.<name>]`). */
  readonly profile?: string;
  readonly signal?: AbortSignal;
};

/** One call checked: the answer, or what was wrong with it, for the host and for the model. */
type Checked<T> =
  | { readonly ok: true; readonly value: T }
  | {
      readonly ok: false;
      readonly call: ToolCall;
      readonly reason: StructuredOutputFailure;
      /** For the host's error: "the last answer …". */
      readonly fault: string;
      /** For the model: what to fix. */
      readonly feedback: string;
    };

const preview = (text: string) => (text.length > 200 ? `${text.slice(0, 200)}…` : text);

/**
 * Asks the model for an answer of the schema's shape: one request with a single tool it must
 * call, whose arguments are checked against the schema. A text reply, arguments that are not
 * JSON, or arguments that do not match go back to the model with what was wrong, up to
 * `maxAttempts` requests; then the result is an error with the reason and the last problem.
 */
export function createChatCompletion<S extends z.ZodType>(
  options: ChatCompletionOptions<S>,
): ResultAsync<z.output<S>, StructuredOutputError> {
  return new ResultAsync(askStructured(options));
}

async function askStructured<S extends z.ZodType>(
  options: ChatCompletionOptions<S>,
): Promise<Result<z.output<S>, StructuredOutputError>> {
  const maxAttempts = options.maxAttempts ?? 3;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
    throw new RangeError(`maxAttempts must be a positive integer, got ${maxAttempts}`);
  }
  const name = options.name ?? CHAT_COMPLETION_TOOL;
  const shape = answerShape(options.schema);
  const tool = defineTool({
    name,
    description: options.description ?? DEFAULT_DESCRIPTION,
    parameters: shape.parameters,
    execute: () => '',
  });
  const messages: Message[] =
    'messages' in options
      ? [...options.messages]
      : [
          ...(options.system ? [{ role: 'system' as const, content: options.system }] : []),
          userMessage(options.prompt),
        ];

  const check = (call: ToolCall): Checked<z.output<S>> => {
    if (call.name !== name) {
      const fault = `called a tool named "${call.name}" instead of ${name}`;
      return {
        ok: false,
        call,
        reason: 'no_tool_call',
        fault,
        feedback: `There is no tool ${call.name}; call ${name}.`,
      };
    }
    let args: unknown;
    try {
      args = JSON.parse(call.arguments);
    } catch (error) {
      const why = `the arguments are not valid JSON (${(error as Error).message})`;
      return {
        ok: false,
        call,
        reason: 'malformed_arguments',
        fault: `sent arguments that are not valid JSON (${(error as Error).message}): ${preview(call.arguments)}`,
        feedback: `${why}. Call ${name} again with a JSON object.`,
      };
    }
    const parsed = tool.parse(args);
    if (parsed.isOk()) return { ok: true, value: shape.unwrap(parsed.value) };
    return {
      ok: false,
      call,
      reason: 'invalid_arguments',
      fault: `sent arguments that do not match the schema:\n${parsed.error}`,
      feedback: `The arguments do not match the schema:\n${parsed.error}\nCall ${name} again with corrected arguments.`,
    };
  };

  let last: { readonly reason: StructuredOutputFailure; readonly fault: string } | undefined;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const reply = await options.llm.complete(
      {
        messages,
        tools: [tool.spec],
        toolChoice: 'required',
        ...(options.profile !== undefined ? { profile: options.profile } : {}),
      },
      options.signal ? { signal: options.signal } : {},
    );
    if (!reply.isOk()) {
      const message = `the model could not be asked for a structured answer: ${describeLlmError(reply.error)}`;
      return err(new StructuredOutputError(message, 'llm_error', attempt, reply.error));
    }
    const { content, toolCalls } = reply.value;
    messages.push(assistantMessage(content, toolCalls));
    if (toolCalls.length === 0) {
      last = {
        reason: 'no_tool_call',
        fault: content.trim() ? `answered in text instead of calling ${name}: ${preview(content)}` : 'answered nothing',
      };
      messages.push(userMessage(`Give your answer by calling ${name}: a text reply cannot be read.`));
      continue;
    }
    const checked = toolCalls.map(check);
    const answer = checked.find((c) => c.ok);
    if (answer?.ok) return ok(answer.value);
    for (const c of checked) {
      // Every call gets its answer, or the next request is not a valid conversation.
      if (!c.ok)
        messages.push({ role: 'tool', content: `Error: ${c.feedback}`, toolCallId: c.call.id, name: c.call.name });
    }
    const first = checked[0];
    if (first && !first.ok) last = first;
  }
  const fault = last?.fault ?? 'gave no answer';
  return err(
    new StructuredOutputError(
      `no valid structured answer after ${maxAttempts} attempt${maxAttempts === 1 ? '' : 's'}: the model ${fault}`,
      last?.reason ?? 'no_tool_call',
      maxAttempts,
    ),
  );
}
