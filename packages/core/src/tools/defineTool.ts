import type { z } from 'zod';
import type { ImageData } from '../kernel/messages.js';
import type { PendingInput } from '../kernel/state.js';
import type { ToolSpec } from '../kernel/tool.js';
import type { Result } from '../result.js';
import type { RunScope, ToolScope } from '../shell/scope.js';

/** What a tool returns: text for the model, optionally an image (e.g. a screenshot). */
export interface ToolOutput {
  readonly output: string;
  readonly image?: ImageData;
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
  execute(args: Args, scope: ToolScope): Promise<ToolReturn> | ToolReturn;
}

export interface ToolDefinition<S extends z.ZodType, R = undefined> extends Omit<ToolSpec, 'parameters'> {
  readonly parameters: S;
  /** Opens what the tool needs for a run (a browser, a session) on its first call in that run. */
  readonly open?: (scope: RunScope) => R | Promise<R>;
  /** Closes it when that run ends. */
  readonly close?: (resource: R) => void | Promise<void>;
  readonly execute: (args: z.output<S>, scope: ToolScope, resource: R) => Promise<ToolReturn> | ToolReturn;
}

/** Defines a tool from a zod schema: the schema gives both the JSON Schema and validation. */
export function defineTool<S extends z.ZodType, R = undefined>(definition: ToolDefinition<S, R>): Tool<z.output<S>> {
  const { parameters, execute, open, close, ...flags } = definition;
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
    execute: open
      ? async (args, scope) =>
          execute(args, scope, await scope.resource(`tool:${flags.name}`, () => open(scope), close))
      : (args, scope) => execute(args, scope, undefined as R),
  };
}

/** One line per problem, with where it is: what the model needs to fix its call. */
function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => `✖ ${issue.message}${issue.path.length > 0 ? `\n  → at ${issue.path.map(String).join('.')}` : ''}`)
    .join('\n');
}
