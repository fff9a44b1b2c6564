// A remote sandbox's pages are reached through its provider's preview links (Daytona's: a public
// URL per port). As OpenManus's sandbox files tool does, the observation of an edit that writes
// the workspace's index.html names the website's link (port 8080, where the sandbox's web server
// shows the workspace); and, beyond it, a bash command after which a new port serves names that
// port's link. Sandboxes the host reaches directly (local, Docker) have no links: nothing changes.
import { posix } from 'node:path';
import {
  err,
  type Sandbox,
  type SandboxProvider,
  sandboxFor,
  type Tool,
  type ToolReturn,
  type ToolScope,
} from '@openmanus/core';
import { toolOutputOf } from '@openmanus/core/internal';

/** The port the sandbox's own web server shows the workspace on (SandboxManus's "website"). */
export const WEBSITE_PORT = 8080;
const EDITS = new Set(['create', 'str_replace', 'insert']);

/**
 * The ports something listens on for other machines (not only loopback), from the kernel's
 * `/proc/net/tcp` and `/proc/net/tcp6` tables.
 */
export function listeningPorts(tables: string): Set<number> {
  const ports = new Set<number>();
  for (const line of tables.split('\n')) {
    // sl  local_address rem_address st …; addresses are hex, IPv4 words little-endian.
    const match = /^\s*\d+:\s+([0-9A-F]+):([0-9A-F]{4})\s+[0-9A-F]+:[0-9A-F]{4}\s+0A\s/i.exec(line);
    if (!match?.[1] || !match[2]) continue;
    const address = match[1].toUpperCase();
    const loopback =
      address === '00000000000000000000000001000000' ||
      ((address.length === 8 || address.startsWith('0000000000000000FFFF0000')) && address.endsWith('7F'));
    if (!loopback) ports.add(Number.parseInt(match[2], 16));
  }
  return ports;
}

const listening = async (sandbox: Sandbox) =>
  listeningPorts((await sandbox.exec(['cat', '/proc/net/tcp', '/proc/net/tcp6'], { timeoutMs: 10_000 })).stdout);

type Previewable = Sandbox & Required<Pick<Sandbox, 'previewUrl'>>;

/** The run's sandbox, when it has preview links. */
async function previewable(scope: ToolScope, provider: SandboxProvider): Promise<Previewable | undefined> {
  const open = sandboxFor(scope, provider);
  const sandbox = open ? await open() : undefined;
  return sandbox?.previewUrl ? (sandbox as Previewable) : undefined;
}

/** `returned` with `note` after its output, when it succeeded. */
function noted(returned: ToolReturn, note: string | undefined): ToolReturn {
  if (!note || (typeof returned === 'object' && 'suspend' in returned)) return returned;
  const result = toolOutputOf(returned);
  if (!result.isOk() || result.value.isError) return returned;
  return { ...result.value, output: `${result.value.output}\n\n${note}` };
}

/** What a link could not be had for is said, not thrown: the edit or command itself went through. */
const linkNote = async (sandbox: Previewable, port: number, text: string) =>
  sandbox.previewUrl(port).then(
    (link) => text.replace('{url}', link.url),
    (error: Error) => `[Port ${port} serves, but its preview link could not be had: ${error.message}]`,
  );

/** str_replace_editor, naming the website's link when it writes index.html in the workspace root. */
function editorWithLink(editor: Tool, provider: SandboxProvider): Tool {
  return {
    ...editor,
    execute: async (args, scope) => {
      const returned = await editor.execute(args, scope);
      const { command, path } = args as { command?: string; path?: string };
      if (!command || !EDITS.has(command) || !path || posix.basename(path).toLowerCase() !== 'index.html')
        return returned;
      const sandbox = await previewable(scope, provider);
      if (!sandbox || posix.dirname(posix.resolve(sandbox.workspace, path)) !== sandbox.workspace) return returned;
      return noted(
        returned,
        await linkNote(
          sandbox,
          WEBSITE_PORT,
          `[index.html is the workspace's home page: the website shows it at {url}]`,
        ),
      );
    },
  };
}

/** bash, naming the link of each port that serves after the command and did not before. */
function bashWithLinks(bash: Tool, provider: SandboxProvider): Tool {
  return {
    ...bash,
    execute: async (args, scope) => {
      let sandbox: Previewable | undefined;
      try {
        sandbox = await previewable(scope, provider);
      } catch (error) {
        // No sandbox could be made: said as bash says it, without a second attempt.
        return err((error as Error).message);
      }
      if (!sandbox) return bash.execute(args, scope);
      // The ports served before the run's first command (the image's own services) are not news.
      const known = await scope.resource('sandbox-manus:served-ports', async () => ({
        ports: await listening(sandbox).catch(() => new Set<number>()),
      }));
      const returned = await bash.execute(args, scope);
      const now = await listening(sandbox).catch(() => new Set<number>());
      const opened = [...now].filter((port) => !known.ports.has(port)).sort((a, b) => a - b);
      known.ports = now;
      const notes = await Promise.all(
        opened.map((port) => linkNote(sandbox, port, `[Port ${port} now serves: its preview link is {url}]`)),
      );
      return noted(returned, notes.join('\n') || undefined);
    },
  };
}

/** Manus's tools with the preview links of `provider`'s sandboxes in their observations. */
export function withPreviewLinks(tools: readonly Tool[], provider: SandboxProvider): Tool[] {
  return tools.map((tool) => {
    if (tool.spec.name === 'str_replace_editor') return editorWithLink(tool, provider);
    if (tool.spec.name === 'bash') return bashWithLinks(tool, provider);
    return tool;
  });
}
