import { type Tool as McpTool, ToolSchema } from '@modelcontextprotocol/sdk/types.js';
import { type JsonLimits, jsonExcess } from './jsonBounds.js';

/** A tool of a server that we do not offer the model, and why (for the model, the host and its person). */
export interface LeftOutTool {
  /** Its name as the server gave it, cut to a readable length. */
  readonly tool: string;
  readonly reason: string;
}

/** What we take of a server's tool list. */
export interface AdmittedTools {
  readonly tools: McpTool[];
  readonly leftOut: LeftOutTool[];
}

/**
 * The most a tool's input schema may be: every request carries it, and core (token counts, state,
 * recordings) handles it with ordinary recursive code. 64 levels is far beyond any real schema.
 */
export const MAX_SCHEMA: JsonLimits = { depth: 64, chars: 100_000 };
/** The most tools we take from one server (the model APIs take 128 in a request). */
export const MAX_TOOLS = 1_000;
/** How much of a left-out tool's name its note shows. */
const NAME_SHOWN = 100;

/**
 * The tools of a server's list that we can offer, checked one by one so that one bad tool costs only
 * itself: its input schema bounded in depth and size (before anything else walks it), then the
 * protocol's own schema of a tool. What we do not use is dropped unread: the output schema (the
 * SDK would compile it, and it checks structured content the model reads anyway) and `_meta`.
 * Tools that must run as tasks (an experimental protocol feature) are left out silently: they are
 * fine, but cannot be called with a plain call.
 */
export function admitTools(listed: readonly unknown[]): AdmittedTools {
  const tools: McpTool[] = [];
  const leftOut: LeftOutTool[] = [];
  for (const [index, entry] of listed.entries()) {
    const admitted = index < MAX_TOOLS ? admit(entry) : `the server lists more than ${MAX_TOOLS} tools`;
    if (typeof admitted === 'string') leftOut.push({ tool: nameOf(entry, index), reason: admitted });
    else if (admitted.execution?.taskSupport !== 'required') tools.push(admitted);
  }
  return { tools, leftOut };
}

/** The tool as we keep it, or why `entry` cannot be one of our tools. */
function admit(entry: unknown): McpTool | string {
  if (typeof entry !== 'object' || entry === null) return 'it is not a tool (no JSON object)';
  const { inputSchema, outputSchema: _unused, _meta: _ignored, ...rest } = entry as Record<string, unknown>;
  const excess = jsonExcess(inputSchema, MAX_SCHEMA);
  if (excess === 'depth') return `its input schema is nested more than ${MAX_SCHEMA.depth} levels deep`;
  if (excess === 'size') return `its input schema is longer than ${MAX_SCHEMA.chars.toLocaleString('en')} characters`;
  const parsed = ToolSchema.safeParse({ ...rest, inputSchema });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? ` (at ${issue.path.map(String).join('.')})` : '';
    return `it is not a valid MCP tool: ${issue?.message ?? 'malformed'}${where}`;
  }
  return parsed.data;
}

function nameOf(entry: unknown, index: number): string {
  const name = typeof entry === 'object' && entry !== null ? (entry as { name?: unknown }).name : undefined;
  if (typeof name !== 'string' || name === '') return `#${index + 1} of its list`;
  return name.length > NAME_SHOWN ? `${name.slice(0, NAME_SHOWN)}…` : name;
}
