import { join } from 'node:path';
import { createResourcePool, executeTool, type RunScope, type Tool, type ToolEvent } from '@openmanus/core';

/** A completed call as core reports it. */
export type Observed = Extract<ToolEvent, { type: 'toolCompleted' }>;

import type { McpClient, McpClientEvent, StdioServerConfig } from '../src/index.js';

export const packageDir = join(import.meta.dirname, '..');
const fixture = join(import.meta.dirname, 'fixtures', 'server.mjs');
export const everythingScript = join(packageDir, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
export const filesystemScript = join(packageDir, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');

/** A name no other test's processes have: their command lines carry it, so `processesMatching` finds only ours. */
export const marker = (name: string) => `${name}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;

/** Our fixture server as a stdio server, its command line tagged (see fixtures/server.mjs for its options). */
export const fixtureServer = (id: string, tag: string, ...options: string[]): StdioServerConfig => ({
  command: process.execPath,
  args: [fixture, '--id', id, '--tag', tag, ...options],
});

/** Resolves once `check` holds, for what shows only in /proc (a process started or gone). */
export async function eventually(check: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('the condition did not hold in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Settles with the first event of the client that `matches`. */
export function nextEvent(client: McpClient, matches: (event: McpClientEvent) => boolean): Promise<McpClientEvent> {
  return new Promise((resolve) => {
    const stop = client.subscribe((event) => {
      if (!matches(event)) return;
      stop();
      resolve(event);
    });
  });
}

/** The tool of `client` with this name (it must be there). */
export function toolNamed(client: McpClient, name: string): Tool {
  const tool = client.tools().find((t) => t.spec.name === name);
  if (!tool)
    throw new Error(
      `no tool ${name}; the client has ${client
        .tools()
        .map((t) => t.spec.name)
        .join(', ')}`,
    );
  return tool;
}

/** What the model sees of a call: core runs the tool as in a run (errors and limits included). */
export async function observe(
  tool: Tool,
  args: unknown,
  signal: AbortSignal = new AbortController().signal,
): Promise<Observed> {
  const pool = createResourcePool();
  const scope: RunScope = {
    runId: 'test',
    signal,
    llm: { model: 'none', complete: async () => ({ ok: false, error: { kind: 'config', message: 'no model' } }) },
    resource: (key, open, close) => pool.get(key, open, close),
    emit: () => {},
    changeTools: async () => {},
  };
  try {
    const call = { id: 'c1', name: tool.spec.name, arguments: JSON.stringify(args) };
    const { timeoutMs } = tool.spec;
    const effect = {
      type: 'callTool',
      id: 'c1',
      call,
      args,
      parallelSafe: false,
      ...(timeoutMs ? { timeoutMs } : {}),
    } as const;
    const event = await executeTool(effect, tool, scope);
    if (event.type !== 'toolCompleted') throw new Error(`${tool.spec.name} suspended`);
    return event;
  } finally {
    await pool.close();
  }
}
