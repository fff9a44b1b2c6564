import type { z } from 'zod';
import type { ImageData } from '../kernel/messages.js';
import type { PendingInput } from '../kernel/state.js';
import type { JsonSchema, ToolSpec } from '../kernel/tool.js';
import type { ToolContent } from '../kernel/toolContent.js';
import { err, ok, type Result } from '../result.js';
import type { RunScope, ToolScope } from '../shell/scope.js';

/** What a tool returns: text for the model, optionally an image (e.g. a screenshot). */
export interface ToolOutput {
  readonly output: string;
  readonly image?: ImageData;
  /**
   * The result as MCP content parts (text, images, audio, embedded files, links), for MCP clients
   * of a server serving this tool: they get these parts instead of `output` and `image`. The model of
   * a run reads `output` (and `image`) either way.
   */
  readonly content?: readonly ToolContent[];
  /** A structured result matching the tool's `outputSchema` (MCP `structuredContent`). */
  readonly structured?: { readonly [key: string]: unknown };
  /**
   * What the observation shrinks to once newer ones of this tool are in memory: e.g. a browser
   * action's result without the page state that followed it (`keepFullObservations` keeps the newest).
   */
  readonly brief?: string;
  /** The output reports a failure (an error observation, `Error: ` put before it), yet keeps its image and brief. */
  readonly isError?: boolean;
}

/** The tool paused on a person (a child agent's approval): the run pauses until they answer. */
export interface ToolSuspension {
  readonly suspend: { readonly progress: unknown; readonly waiting: readonly PendingInput[] };
}

export type ToolReturn = string | ToolOutput | Result<string | ToolOutput, string | Error> | ToolSuspension;

/** A tool: its spec plus the code that runs it. */
export interface Tool<Args = unknown> {
  readonly spec: ToolSpec;
  /** Validates raw JSON-parsed arguments; failures become observations for the model. */
  readonly parse: (args: unknown) => Result<Args, string>;
  // Method syntax on purpose: a Tool<{ a: number }> must be usable where a Tool<unknown> is expected.
  execute(args: Args, scope: ToolScope): PromiseLike<ToolReturn> | ToolReturn;
}

export interface ToolDefinition<S extends z.ZodType, R = undefined>
  extends Omit<ToolSpec, 'parameters' | 'outputSchema' | 'schemaDialect'> {
  readonly parameters: S;
  /** The shape of the call's `structured` result (zod or JSON Schema), listed to MCP clients. */
  readonly outputSchema?: z.ZodType | JsonSchema;
  /** Opens what the tool needs for a run (a browser, a session) on its first call in that run. */
  readonly open?: (scope: RunScope) => R | Promise<R>;
  /** Closes it when that run ends. */
  readonly close?: (resource: R) => void | Promise<void>;
  readonly execute: (args: z.output<S>, scope: ToolScope, resource: R) => PromiseLike<ToolReturn> | ToolReturn;
}

/**
 * A tool whose arguments are described by a plain JSON Schema (as MCP servers and OpenAI's own
 * examples give them), without zod: `validate` checks them when given; otherwise the tool gets
 * the JSON object the model sent.
 */
export interface JsonToolDefinition<Args, R = undefined>
  extends Omit<ToolSpec, 'parameters' | 'outputSchema' | 'schemaDialect'> {
  /** As given: its `$schema`, if any, is kept for MCP clients (`spec.schemaDialect`), not sent to models. */
  readonly parameters: JsonSchema;
  readonly outputSchema?: z.ZodType | JsonSchema;
  readonly validate?: (args: unknown) => Result<Args, string>;
  readonly open?: (scope: RunScope) => R | Promise<R>;
  readonly close?: (resource: R) => void | Promise<void>;
  readonly execute: (args: Args, scope: ToolScope, resource: R) => PromiseLike<ToolReturn> | ToolReturn;
}

/** Defines a tool from a zod schema (the schema gives both the JSON Schema and validation) or a plain JSON Schema. */
export function defineTool<S extends z.ZodType, R = undefined>(definition: ToolDefinition<S, R>): Tool<z.output<S>>;
export function defineTool<Args = Record<string, unknown>, R = undefined>(
  definition: JsonToolDefinition<Args, R>,
): Tool<Args>;
export function defineTool<Args, R>(
  definition: ToolDefinition<z.ZodType, R> | JsonToolDefinition<Args, R>,
): Tool<unknown> {
  const { parameters, execute, open, close, outputSchema, ...rest } = definition;
  const { validate, ...flags } = rest as typeof rest & { validate?: JsonToolDefinition<Args, R>['validate'] };
  const run = execute as (args: unknown, scope: ToolScope, resource: R) => PromiseLike<ToolReturn> | ToolReturn;
  const zod = isZodSchema(parameters) ? parameters : undefined;
  // The schema's own methods, so that importing this module does not load zod. Models are sent no
  // `$schema`; a JSON Schema's own is kept aside for MCP clients (zod's is ours, not the author's).
  const { $schema: dialect, ...schema } = (zod ? zod.toJSONSchema({ io: 'input' }) : parameters) as Record<
    string,
    unknown
  >;
  const output =
    outputSchema === undefined
      ? undefined
      : isZodSchema(outputSchema)
        ? withoutDialect(outputSchema.toJSONSchema({ io: 'output' }) as Record<string, unknown>)
        : outputSchema;
  return {
    spec: {
      ...flags,
      parameters: schema,
      ...(!zod && typeof dialect === 'string' ? { schemaDialect: dialect } : {}),
      ...(output ? { outputSchema: output } : {}),
    },
    parse: (args) => {
      if (!zod) return validate ? validate(args) : ok(args);
      const parsed = zod.safeParse(args);
      return parsed.success ? ok(parsed.data) : err(describeIssues(parsed.error.issues));
    },
    execute: open
      ? async (args, scope) => run(args, scope, await scope.resource(`tool:${flags.name}`, () => open(scope), close))
      : (args, scope) => run(args, scope, undefined as R),
  };
}

const withoutDialect = ({ $schema: _dialect, ...schema }: Record<string, unknown>): JsonSchema => schema;

const isZodSchema = (parameters: z.ZodType | JsonSchema): parameters is z.ZodType =>
  typeof (parameters as { safeParse?: unknown }).safeParse === 'function';

/** One line per problem, with where it is: what the model needs to fix its call. */
function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => `✖ ${issue.message}${issue.path.length > 0 ? `\n  → at ${issue.path.map(String).join('.')}` : ''}`)
    .join('\n');
}
