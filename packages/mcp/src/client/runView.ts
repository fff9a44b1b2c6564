import type { ServerState } from './serverLink.js';
import type { LeftOutTool } from './toolAdmission.js';

/** A tool of the client as a run has it: which server it is from, and its spec (to see it change). */
export interface ViewedTool {
  readonly server: string;
  readonly fingerprint: string;
}

/** What one run has of the client's tools, which servers it has been told are down, and which tools left out. */
export interface RunView {
  readonly tools: ReadonlyMap<string, ViewedTool>;
  readonly down: ReadonlySet<string>;
  /** By server: the left-out tools the run was last told of (as a fingerprint). */
  readonly leftOut: ReadonlyMap<string, string>;
}

export interface ServerView {
  readonly id: string;
  readonly state: ServerState;
  readonly error?: string;
  readonly leftOut?: readonly LeftOutTool[];
}

/** How many left-out tools a note names. */
const LEFT_OUT_NAMED = 10;

/** How a run's tools must change to match the client's, and what the model is told about it. */
export interface ViewChange {
  readonly add: readonly string[];
  readonly remove: readonly string[];
  readonly notes: readonly string[];
  readonly view: RunView;
}

/**
 * From what a run has (`undefined`: nothing yet, it has just started) to what the client has now.
 * A run that has just started gets everything silently, and loses whatever of ours an earlier run
 * of the session left in its state (`named`: every name the client ever gave); the model is told
 * only of servers that are not there and of tools left out. Later, every change is told: a server
 * gone, back, or with new, withdrawn, changed or left-out tools.
 */
export function changeView(
  previous: RunView | undefined,
  current: ReadonlyMap<string, ViewedTool>,
  servers: readonly ServerView[],
  named: ReadonlySet<string>,
): ViewChange {
  const before = previous?.tools ?? new Map<string, ViewedTool>();
  const add = [...current].filter(([name, tool]) => before.get(name)?.fingerprint !== tool.fingerprint).map(([n]) => n);
  const remove = [...(previous ? before.keys() : named)].filter((name) => !current.has(name));
  const notes: string[] = [];
  const down = new Set<string>();
  const leftOut = new Map<string, string>();
  const namesOf = (tools: ReadonlyMap<string, ViewedTool>, server: string) =>
    [...tools].filter(([, tool]) => tool.server === server).map(([name]) => name);
  for (const server of servers) {
    const had = namesOf(before, server.id);
    const has = namesOf(current, server.id);
    const quoted = `The MCP server "${server.id}"`;
    if (server.state !== 'connected') {
      down.add(server.id);
      if (previous?.down.has(server.id)) continue;
      const why = `(${server.error ?? server.state})`;
      const retry = server.state === 'closed' ? '' : ' It is being reconnected in the background.';
      notes.push(
        had.length > 0
          ? `${quoted} disconnected ${why}. Its tools were withdrawn: ${had.join(', ')}.${retry}`
          : `${quoted} is not connected ${why}, so its tools are unavailable for now.${retry}`,
      );
    } else if (previous?.down.has(server.id)) {
      notes.push(`${quoted} is connected again. Its tools are back: ${has.join(', ') || 'none'}.`);
    } else if (previous) {
      const added = has.filter((name) => !before.has(name));
      const withdrawn = had.filter((name) => !current.has(name));
      const changed = has.filter((name) => before.has(name) && add.includes(name));
      const parts = [
        added.length > 0 ? `New: ${added.join(', ')}.` : '',
        withdrawn.length > 0 ? `Withdrawn: ${withdrawn.join(', ')}.` : '',
        changed.length > 0 ? `Changed (description or parameters): ${changed.join(', ')}.` : '',
      ].filter(Boolean);
      if (parts.length > 0) notes.push(`${quoted} changed its tools. ${parts.join(' ')}`);
    }
    if (server.state === 'connected' && server.leftOut && server.leftOut.length > 0) {
      const told = JSON.stringify(server.leftOut);
      leftOut.set(server.id, told);
      if (previous?.leftOut.get(server.id) !== told) notes.push(leftOutNote(quoted, server.leftOut));
    }
  }
  return { add, remove, notes, view: { tools: current, down, leftOut } };
}

/** Which tools of a server the model does not get, and why; names quoted as JSON (they are the server's text). */
function leftOutNote(quoted: string, tools: readonly LeftOutTool[]): string {
  const named = tools.slice(0, LEFT_OUT_NAMED).map(({ tool, reason }) => `${JSON.stringify(tool)} (${reason})`);
  const more = tools.length > LEFT_OUT_NAMED ? `, and ${tools.length - LEFT_OUT_NAMED} more` : '';
  return `${quoted} offers tools that were left out, so you cannot call them: ${named.join('; ')}${more}.`;
}
