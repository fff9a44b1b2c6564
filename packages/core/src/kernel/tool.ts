/** JSON Schema object as sent to the model (produced from a zod schema). */
export type JsonSchema = { readonly [key: string]: unknown };

/**
 * What the reducer knows about a tool: pure data, no code. The shell pairs it with
 * the tool's `execute` by name.
 */
export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
  /**
   * The JSON Schema dialect `parameters` were written in (their `$schema`), kept for MCP clients,
   * which get the schema as given; models are sent `parameters` without it.
   */
  readonly schemaDialect?: string;
  /** The JSON Schema of the call's structured result (`ToolOutput.structured`), for MCP clients. */
  readonly outputSchema?: JsonSchema;
  /** A successful call ends the run as `terminated` (OpenManus's "special tools"). */
  readonly terminal?: boolean;
  /** The host must approve each call before it runs. */
  readonly needsApproval?: boolean;
  /** Calls may run concurrently with other parallel-safe calls of the same turn. */
  readonly parallelSafe?: boolean;
  /** The call is answered by a person: the argument holding the question. */
  readonly human?: { readonly questionArg: string };
  /** Per-call time limit enforced by the shell. */
  readonly timeoutMs?: number;
  /**
   * Run at most once: the start of each call is saved before it runs, and a call a crash
   * interrupted is not run again on resume — the model is told it may or may not have happened.
   */
  readonly atMostOnce?: boolean;
}
