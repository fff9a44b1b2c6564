import {
  ErrorCode,
  type GetPromptResult,
  type Prompt,
  type PromptArgument,
  type PromptMessage,
  PromptMessageSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { CatalogError, type CatalogScope, type Completer, checkLength } from './catalogResources.js';

/** A prompt argument described by hand (MCP's form): every value is a string. */
export interface PromptArgumentSpec {
  readonly name: string;
  readonly description?: string;
  readonly required?: boolean;
}

/** A message's content: a string (text) or an MCP content block (text, image, audio, an embedded resource, a link). */
export type PromptContent = string | PromptMessage['content'];

export interface PromptMessageSpec {
  /** Default: `user`. */
  readonly role?: 'user' | 'assistant';
  readonly content: PromptContent;
}

/** What `get` gives: a string (one user message), messages, or messages with a description. */
export type PromptOutcome =
  | string
  | readonly PromptMessageSpec[]
  | { readonly description?: string; readonly messages: readonly PromptMessageSpec[] };

/** The arguments `get` is given: the zod object's output, or the declared strings (a missing optional one left out). */
export type PromptArgs = Readonly<Record<string, string | undefined>>;

export interface McpPrompt {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  /**
   * A zod object of string fields (`.describe()` gives an argument its description, `.optional()`
   * makes it optional, a `z.enum` completes by itself), or the arguments as MCP lists them.
   */
  readonly arguments?: z.ZodObject | readonly PromptArgumentSpec[];
  get(args: PromptArgs, scope: CatalogScope): PromptOutcome | Promise<PromptOutcome>;
  /** Completion of the arguments, by name. */
  readonly complete?: Readonly<Record<string, Completer>>;
}

/** A prompt whose `get` is typed by its zod arguments. */
export interface TypedPrompt<Schema extends z.ZodObject> extends Omit<McpPrompt, 'arguments' | 'get'> {
  readonly arguments: Schema;
  get(args: z.output<Schema>, scope: CatalogScope): PromptOutcome | Promise<PromptOutcome>;
}

/** Types a prompt's `get` by its zod `arguments` (as `defineTool` types a tool's `execute`). */
export function definePrompt<Schema extends z.ZodObject>(prompt: TypedPrompt<Schema>): McpPrompt;
export function definePrompt(prompt: McpPrompt): McpPrompt;
export function definePrompt(prompt: McpPrompt): McpPrompt {
  return prompt;
}

/** The field's schema without `.optional()`, `.default()` and the like around it. */
function unwrapped(schema: z.ZodType): z.ZodType {
  let current = schema;
  while (current instanceof z.ZodOptional || current instanceof z.ZodDefault || current instanceof z.ZodNullable) {
    current = current.unwrap() as z.ZodType;
  }
  return current;
}

/** The prompt's arguments as MCP lists them. */
export function promptArguments(prompt: McpPrompt): PromptArgument[] {
  const { arguments: args } = prompt;
  if (!args) return [];
  if (Array.isArray(args)) return args.map((arg) => ({ ...arg }));
  return Object.entries((args as z.ZodObject).shape).map(([name, field]) => {
    const schema = field as z.ZodType;
    const description = schema.description ?? unwrapped(schema).description;
    return {
      name,
      ...(description !== undefined ? { description } : {}),
      required: !schema.safeParse(undefined).success,
    };
  });
}

export function promptListing(prompt: McpPrompt): Prompt {
  const args = promptArguments(prompt);
  return {
    name: prompt.name,
    ...(prompt.title !== undefined ? { title: prompt.title } : {}),
    ...(prompt.description !== undefined ? { description: prompt.description } : {}),
    ...(args.length > 0 ? { arguments: args } : {}),
  };
}

/** The options of a `z.enum` argument, which complete it when the prompt gives no completer. */
export function enumOptions(prompt: McpPrompt, name: string): readonly string[] | undefined {
  const { arguments: args } = prompt;
  if (!args || Array.isArray(args)) return undefined;
  const field = (args as z.ZodObject).shape[name] as z.ZodType | undefined;
  const inner = field && unwrapped(field);
  return inner instanceof z.ZodEnum ? inner.options.map(String) : undefined;
}

/** The client's arguments checked against the prompt's: a missing or invalid one is `InvalidParams`. */
export function parsePromptArgs(
  prompt: McpPrompt,
  given: Readonly<Record<string, string>>,
  maxArgumentLength: number,
): PromptArgs {
  for (const [name, value] of Object.entries(given)) {
    checkLength(`The argument ${name} of ${prompt.name}`, value, maxArgumentLength);
  }
  const { arguments: args } = prompt;
  if (!args) return {};
  if (Array.isArray(args)) {
    const specs = args as readonly PromptArgumentSpec[];
    const missing = specs.filter((arg) => arg.required && given[arg.name] === undefined).map((arg) => arg.name);
    if (missing.length > 0) {
      throw new CatalogError(
        ErrorCode.InvalidParams,
        `The prompt ${prompt.name} needs the argument ${missing.join(', ')}`,
      );
    }
    return Object.fromEntries(
      specs.flatMap((arg) => (given[arg.name] !== undefined ? [[arg.name, given[arg.name]]] : [])),
    );
  }
  const parsed = (args as z.ZodObject).safeParse(given);
  if (!parsed.success) {
    throw new CatalogError(
      ErrorCode.InvalidParams,
      `Invalid arguments for the prompt ${prompt.name}: ${z.prettifyError(parsed.error)}`,
    );
  }
  return parsed.data as PromptArgs;
}

/** What `get` gave as MCP's result, checked against the protocol's schema and refused over `maxBytes`. */
export function toPromptResult(prompt: McpPrompt, outcome: PromptOutcome, maxBytes: number): GetPromptResult {
  const invalid = (why: string) => new CatalogError(ErrorCode.InternalError, `The prompt ${prompt.name} ${why}`);
  const specs: readonly PromptMessageSpec[] =
    typeof outcome === 'string'
      ? [{ content: outcome }]
      : Array.isArray(outcome)
        ? outcome
        : (outcome as { messages: PromptMessageSpec[] }).messages;
  if (!Array.isArray(specs)) throw invalid('gave no messages');
  const messages = specs.map((spec, index) => {
    const message = PromptMessageSchema.safeParse({
      role: spec?.role ?? 'user',
      content: typeof spec?.content === 'string' ? { type: 'text', text: spec.content } : spec?.content,
    });
    if (!message.success) throw invalid(`gave an invalid message ${index + 1}: ${z.prettifyError(message.error)}`);
    return message.data;
  });
  const description =
    typeof outcome === 'object' && !Array.isArray(outcome)
      ? (outcome as { description?: string }).description
      : undefined;
  const result: GetPromptResult = {
    ...(description !== undefined
      ? { description }
      : prompt.description !== undefined
        ? { description: prompt.description }
        : {}),
    messages,
  };
  const bytes = Buffer.byteLength(JSON.stringify(result));
  if (bytes > maxBytes) {
    throw new CatalogError(
      ErrorCode.InvalidRequest,
      `The prompt ${prompt.name} is ${bytes} bytes; this server sends at most ${maxBytes} bytes of a prompt`,
    );
  }
  return result;
}
