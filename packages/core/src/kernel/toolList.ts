/**
 * The tools of a run stay in one list for its whole life: tools come first in a request, so a list
 * that reshuffled when a tool came or went (an MCP server's tools changing) would break a provider's
 * prompt cache for everything after it. A changed tool keeps its place, a new one goes at the end,
 * and one that went away stays listed, its calls answered as unavailable.
 */
import type { ToolSpec } from './tool.js';

export interface ToolListChange {
  readonly tools: readonly ToolSpec[];
  /** Names listed but gone: their calls are answered as unavailable. */
  readonly unavailable: readonly string[];
}

/** `next` merged into `current`: same order, new tools appended, missing ones kept and marked unavailable. */
export function mergeToolList(current: readonly ToolSpec[], next: readonly ToolSpec[]): ToolListChange {
  const byName = new Map(next.map((tool) => [tool.name, tool]));
  const tools: ToolSpec[] = [];
  const unavailable: string[] = [];
  for (const tool of current) {
    const now = byName.get(tool.name);
    tools.push(now ?? tool);
    if (now) byName.delete(tool.name);
    else unavailable.push(tool.name);
  }
  for (const tool of byName.values()) tools.push(tool);
  return { tools, unavailable };
}

export const unavailableToolError = (name: string): string =>
  `Error: the tool '${name}' is not available any more in this run (its server or provider removed it). Do without it.`;
