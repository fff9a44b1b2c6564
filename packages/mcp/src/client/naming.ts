/** Longest tool name the model APIs accept. */
export const MAX_TOOL_NAME = 64;

/**
 * OpenManus's rule for a name the model APIs accept: characters outside `[A-Za-z0-9_-]` become
 * `_`, runs of `_` collapse into one, `_` is trimmed from both ends, and the result is cut to 64.
 */
export function sanitizeToolName(name: string): string {
  return name
    .replace(/[^A-Za-z0-9_-]/g, '_')
    .replace(/_+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, MAX_TOOL_NAME);
}

/** The name a server's tool has for the model: `mcp_{serverId}_{tool}`, sanitised. */
export const mcpToolName = (serverId: string, tool: string): string => sanitizeToolName(`mcp_${serverId}_${tool}`);

/**
 * `name`, or — when another tool already has it — `name` with the first free suffix `_2`, `_3`, …,
 * cut so that the whole still fits in 64 characters (two long names that share their first 64
 * characters must not become one tool).
 */
export function uniqueToolName(name: string, taken: ReadonlySet<string>): string {
  if (!taken.has(name)) return name;
  for (let n = 2; ; n++) {
    const suffix = `_${n}`;
    const candidate = name.slice(0, MAX_TOOL_NAME - suffix.length).replace(/_+$/, '') + suffix;
    if (!taken.has(candidate)) return candidate;
  }
}
