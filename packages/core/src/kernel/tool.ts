import type { Result } from 'neverthrow';
import type { z } from 'zod';
import type { LlmPort } from '../llm/llm.js';
import type { ImageData } from './messages.js';

/** JSON Schema object as sent to the model (produced from a zod schema). */
export type JsonSchema = { readonly [key: string]: unknown };

/**
 * What the reducer knows about a tool: pure data, no code. The interpreter pairs it with
 * the tool's `execute` by name.
 */
export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
  /** A successful call ends the run as `terminated` (OpenManus's "special tools"). */
  readonly terminal?: boolean;
  /** The host must approve each call before it runs. */
  readonly needsApproval?: boolean;
  /** Calls may run concurrently with other parallel-safe calls of the same turn. */
  readonly parallelSafe?: boolean;
  /** The call is answered by a person: the argument holding the question. */
  readonly human?: { readonly questionArg: string };
  /** Per-call time limit enforced by the interpreter. */
  readonly timeoutMs?: number;
}

/** What a tool returns: text for the model, optionally an image (e.g. a screenshot). */
export interface ToolOutput {
  readonly output: string;
  readonly image?: ImageData;
}

/** Everything a running tool may use besides its arguments. */
export interface ToolContext {
  readonly signal: AbortSignal;
  readonly callId: string;
  readonly workspace?: string;
  /** The run's model, for tools that call it themselves (summarise, extract from a page). */
  readonly llm?: LlmPort;
}

export type ToolReturn = string | ToolOutput | Result<string | ToolOutput, Error | string>;

/** A tool: its spec plus the code that runs it. */
export interface Tool<Args = unknown> {
  readonly spec: ToolSpec;
  /** Validates raw JSON-parsed arguments; failures become observations for the model. */
  readonly parse: (args: unknown) => { ok: true; value: Args } | { ok: false; error: string };
  // Method syntax on purpose: a Tool<{ a: number }> must be usable where a Tool<unknown> is expected.
  execute(args: Args, context: ToolContext): Promise<ToolReturn> | ToolReturn;
  /** Releases what the tool holds (a browser, a session); called once when a run ends. */
  readonly cleanup?: () => Promise<void> | void;
}

export interface ToolDefinition<S extends z.ZodType> extends Omit<ToolSpec, 'parameters'> {
  readonly parameters: S;
  readonly execute: (args: z.output<S>, context: ToolContext) => Promise<ToolReturn> | ToolReturn;
  readonly cleanup?: () => Promise<void> | void;
}

/** Defines a tool from a zod schema: the schema gives both the JSON Schema and validation. */
export function defineTool<S extends z.ZodType>(definition: ToolDefinition<S>): Tool<z.output<S>> {
  const { parameters, execute, cleanup, ...flags } = definition;
  // The schema's own methods, so that importing this module does not load zod.
  const { $schema: _dialect, ...schema } = parameters.toJSONSchema({ io: 'input' }) as Record<string, unknown>;
  return {
    spec: { ...flags, parameters: schema },
    parse: (args) => {
      const parsed = parameters.safeParse(args);
      return parsed.success
        ? { ok: true, value: parsed.data }
        : { ok: false, error: describeIssues(parsed.error.issues) };
    },
    execute,
    ...(cleanup ? { cleanup } : {}),
  };
}

/** One line per problem, with where it is: what the model needs to fix its call. */
function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => `✖ ${issue.message}${issue.path.length > 0 ? `\n  → at ${issue.path.map(String).join('.')}` : ''}`)
    .join('\n');
}
